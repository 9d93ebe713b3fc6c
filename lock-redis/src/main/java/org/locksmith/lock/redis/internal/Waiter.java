package org.locksmith.lock.redis.internal;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.locksmith.lock.spi.AcquireRequest;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.exceptions.JedisRedirectionException;

/**
 * One thread waiting for one key, in {@code BLPOP} on the key's wake-up list. {@code BLPOP} ignores {@link
 * Thread#interrupt()}, so a cancelled waiter is unblocked by a signal pushed to its own cancel list, which it blocks on
 * together with the wake-up list. The state machine makes sure a signal is pushed only while the waiter blocks, and
 * that the waiter deletes a signal it did not consume: an interrupted or timed-out waiter leaves nothing in Redis.
 *
 * <p>Used by the acquiring thread ({@link #await}, {@link #passWakeUp}, {@link #cleanUp}) and by the core's cancel
 * action ({@link #cancel}), which never blocks.
 */
final class Waiter {
    private static final System.Logger LOG = System.getLogger("org.locksmith.lock.redis");
    private static final int IDLE = 0;
    private static final int BLOCKING = 1;
    private static final int SIGNALLING = 2;
    private static final int CANCELLED = 3;
    /** The waiter returned while its signal was being sent: the sender deletes the signal if it was not taken. */
    private static final int LEFT = 4;

    private final WaitRoom room;
    private final LockKeys keys;
    private final AcquireRequest request;
    private final String cancelKey;
    private final AtomicInteger state = new AtomicInteger(IDLE);
    /** Set by the cancel action once its signal is in Redis. */
    private volatile boolean signalled;
    /** Set by the waiter when BLPOP returned the signal, which removed it (a list of one element vanishes). */
    private volatile boolean signalConsumed;
    /** The waiting thread's interrupt status, set aside while an uninterruptible request blocks. */
    private boolean interruptSet;

    Waiter(WaitRoom room, LockKeys keys, AcquireRequest request) {
        this.room = room;
        this.keys = keys;
        this.request = request;
        this.cancelKey = keys.cancel(request.ownerId());
    }

    /**
     * The longest a waiter may block, given what the refused acquire reported about the holder's lease: never past
     * its end (a crashed holder frees the key at expiry, unannounced), and at most one lease when the key has none.
     *
     * @param holderPttl the holder's {@code PTTL} as the acquire script saw it: {@code >= 0} a live lease (0 too: it
     *     ends within the current millisecond, and must not be taken for "no lease"), {@code -1} a key without expiry
     */
    static long waitCapNanos(long holderPttl, Duration lease) {
        return holderPttl >= 0 ? TimeUnit.MILLISECONDS.toNanos(holderPttl + 1) : lease.toNanos();
    }

    /**
     * Whether an uninterruptible wait ({@code Lock.lock()}) set the thread's interrupt status aside to block again;
     * the caller sets it again before returning.
     */
    boolean interruptSet() {
        return interruptSet;
    }

    /** Blocks until a wake-up, the timeout, or cancellation; true if it consumed a wake-up. */
    boolean await(long timeoutNanos) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutNanos;
        if (!room.blockingPermits.tryAcquire()) {
            queueForPermit(deadline);
            return false;
        }
        try {
            long left = deadline - System.nanoTime();
            // BLPOP's timeout 0 means forever; below a millisecond it is not worth a round trip.
            if (left < TimeUnit.MILLISECONDS.toNanos(1) || !state.compareAndSet(IDLE, BLOCKING)) {
                return false;
            }
            if (request.isCancelled()) {
                state.compareAndSet(BLOCKING, IDLE);
                return false;
            }
            if (Thread.interrupted()) {
                // A virtual thread's socket closes when it does I/O with the status set. An interruptible request
                // is cancelled by the status (above), so this is Lock.lock(): it waits on and gets it back at the
                // end.
                interruptSet = true;
            }
            String popped;
            try {
                popped = room.connections.blpop(keys, cancelKey, TimeUnit.NANOSECONDS.toMillis(left));
            } catch (JedisRedirectionException e) {
                state.compareAndSet(BLOCKING, IDLE);
                followSlot();
                return false;
            } catch (JedisException e) {
                state.compareAndSet(BLOCKING, IDLE);
                recoverFromFailedWait(e, deadline);
                return false;
            }
            state.compareAndSet(BLOCKING, IDLE);
            if (cancelKey.equals(popped)) {
                signalConsumed = true;
            }
            return keys.wake().equals(popped);
        } finally {
            room.blockingPermits.release();
        }
    }

    /**
     * More waiters than may block: queue locally, woken by a permit given back or by the request's cancellation (its
     * cancel action), never by a timer, so ten thousand queued waiters cost nothing while nothing happens.
     */
    private void queueForPermit(long deadline) throws InterruptedException {
        if (room.overflowLogged.compareAndSet(false, true)) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "More threads wait for Redis locks than may block on a connection ("
                            + room.blockingLimit
                            + "); the others queue locally and are woken later. Raise waitPoolSize (or give"
                            + " RedisLocks a separate waitClient with a larger pool).");
        }
        if (!room.blockingPermits.acquire(request, deadline - System.nanoTime())) {
            return;
        }
        // The key may have been released while this thread queued, its wake-up taken by nobody: look at it
        // again before blocking.
        room.blockingPermits.release();
    }

    /**
     * The slot moved (resharding, failover): the BLPOP went, on a raw connection, to the old node. A keyed command
     * through the client follows the redirect and refreshes its slot map; then the waiter looks at the lock again and
     * blocks on the new node.
     */
    private void followSlot() {
        try {
            LockScripts.uninterrupted(() -> room.waits.client().exists(keys.wake()));
        } catch (JedisException refresh) {
            throw room.scripts.failure("failed while waiting", refresh);
        }
    }

    /**
     * A {@code BLPOP} that failed: returns (to look at the lock again) when the failure passes or the wait goes on
     * elsewhere, and throws otherwise.
     */
    private void recoverFromFailedWait(JedisException e, long deadline) {
        if (e instanceof JedisDataException d && RedisFailures.isPassing(d)) {
            // UNBLOCKED (the master became a replica), CLUSTERDOWN, ...: look again once the client
            // follows the new master, within the deadline.
            room.scripts.followMaster();
            RedisFailures.failoverBackOff(deadline - System.nanoTime());
            return;
        }
        if (Thread.currentThread().isInterrupted()) {
            // Interrupted in BLPOP on a virtual thread, whose socket the interrupt closed (a platform
            // thread's BLPOP ignores interrupts and is ended by the cancel signal instead): the request
            // is cancelled now, or for Lock.lock() the status is kept for the end and the wait goes on.
            if (!request.isInterruptible()) {
                Thread.interrupted();
                interruptSet = true;
            }
            return;
        }
        if (RedisFailures.closedByServer(e)) {
            // The wait connection was killed: look at the lock again on a fresh one.
            room.scripts.followMaster();
            room.waits.dropIdleConnections();
            return;
        }
        throw room.scripts.failure("failed while waiting", e);
    }

    /** The core's cancel action: unblocks the BLPOP if the waiter is in it. Never blocks the caller. */
    void cancel() {
        if (state.compareAndSet(BLOCKING, SIGNALLING)) {
            try {
                room.canceller.execute(this::sendSignal);
            } catch (RejectedExecutionException closing) {
                // Only when the client is closing: the waiter wakes at its BLPOP timeout.
                state.set(CANCELLED);
            }
        } else {
            state.compareAndSet(IDLE, CANCELLED);
        }
    }

    private void sendSignal() {
        boolean pushed = false;
        try {
            LockScripts.run(
                    room.commands.client(),
                    LockScripts.SIGNAL,
                    LockScripts.SIGNAL_SHA,
                    List.of(cancelKey),
                    List.of(room.wakeTtlMillis));
            pushed = true;
            signalled = true;
        } catch (RuntimeException e) {
            // The waiter wakes at its BLPOP timeout instead, at most the deadline or the holder's lease.
            LOG.log(System.Logger.Level.DEBUG, "Could not signal a cancelled Redis lock waiter", e);
        } finally {
            if (!state.compareAndSet(SIGNALLING, CANCELLED) && pushed && !signalConsumed) {
                // LEFT: the waiter returned meanwhile without taking the signal, and did not wait for it.
                deleteSignal();
            }
        }
    }

    /** Pushes a consumed wake-up on to the next waiter, for a waiter that leaves before its next attempt ran. */
    void passWakeUp() {
        try {
            LockScripts.run(
                    room.commands.client(),
                    LockScripts.PASS_WAKEUP,
                    LockScripts.PASS_WAKEUP_SHA,
                    List.of(keys.hash(), keys.wake()),
                    List.of(room.wakeTtlMillis));
        } catch (JedisException e) {
            // Other waiters then wake at their holder's lease end at the latest.
            LOG.log(System.Logger.Level.DEBUG, "Could not pass on a Redis lock wake-up", e);
        }
    }

    /**
     * Deletes a cancel signal that was pushed but not consumed, so a cancelled waiter leaves nothing behind.
     * Never waits for a signal still being sent (on a stalled server that takes up to {@code timeoutMs}, in turn
     * through the few sender threads): its sender deletes it then.
     */
    void cleanUp() {
        if (state.compareAndSet(SIGNALLING, LEFT)) {
            return;
        }
        if (signalled && !signalConsumed) {
            deleteSignal();
        }
    }

    private void deleteSignal() {
        try {
            LockScripts.uninterrupted(() -> room.commands.client().del(cancelKey));
        } catch (JedisException e) {
            LOG.log(System.Logger.Level.DEBUG, "Could not delete a Redis lock cancel signal; it expires", e);
        }
    }
}
