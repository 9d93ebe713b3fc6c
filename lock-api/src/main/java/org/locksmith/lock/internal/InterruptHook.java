package org.locksmith.lock.internal;

import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.spi.AbstractInterruptibleChannel;

/**
 * Hears {@link Thread#interrupt()} of a thread blocked in a store call that ignores interrupts (a socket read of a
 * JDBC driver or of Jedis), at the moment it happens, so that the core can run the request's cancel actions without
 * checking the thread's status on a timer.
 *
 * <p>It is the JDK's own mechanism for interruptible I/O, used through its public API: while an {@link
 * AbstractInterruptibleChannel} is between {@code begin()} and {@code end()}, {@code Thread.interrupt()} of that
 * thread closes the channel on the interrupting thread, before it returns; this channel's close is the request's
 * cancellation. {@code begin()} also closes it at once if the thread is interrupted already. A thread has one such
 * registration at a time: a store call that itself blocks in an interruptible channel on the same thread takes it
 * over (and is interrupted by that channel closing), and its {@code end()} clears it; {@link CoreAcquireRequest}
 * arms the hook again on every {@code onCancel}, which a backend calls before it blocks.
 *
 * <p>Not a channel anybody reads or writes: nothing but an interrupt or {@link #disarm()} closes it.
 */
final class InterruptHook extends AbstractInterruptibleChannel {
    private final Runnable onInterrupt;

    InterruptHook(Runnable onInterrupt) {
        this.onInterrupt = onInterrupt;
    }

    /** Listens for interrupts of the current thread from now on; runs the action at once if it is interrupted. */
    void arm() {
        begin();
    }

    /** Stops listening; on the thread that armed it. */
    void disarm() {
        try {
            end(true);
        } catch (AsynchronousCloseException interruptedMeanwhile) {
            // ClosedByInterruptException: the action ran; the thread keeps its interrupt status
        }
    }

    /** Called by {@code Thread.interrupt()} on the interrupting thread, once: must not block. */
    @Override
    protected void implCloseChannel() {
        onInterrupt.run();
    }
}
