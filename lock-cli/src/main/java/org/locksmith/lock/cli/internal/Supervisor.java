package org.locksmith.lock.cli.internal;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.cli.ExitStatus;
import sun.misc.Signal;

/**
 * Supervises the child of {@code locksmith run}: starts it, forwards SIGINT/SIGTERM to it as SIGTERM followed by
 * SIGKILL after the grace period, terminates it the same way when the lock is lost, and makes sure the lock client
 * is closed (which releases the lock) however the JVM ends.
 *
 * <p>SIGINT and SIGTERM are caught with {@code sun.misc.Signal} rather than a shutdown hook alone, because the exit
 * status must say which signal came (128 + its number) and the main thread must get the chance to release the
 * lock itself (a lease is owned by the thread that acquired it). A shutdown hook remains for the other ways the JVM
 * may end (SIGHUP, {@code System.exit}).
 */
public final class Supervisor {
    private final Duration grace;
    private final Thread mainThread = Thread.currentThread();
    private final ReentrantLock state = new ReentrantLock();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "locksmith-kill-timer");
        t.setDaemon(true);
        return t;
    });
    private Process child;
    private volatile int signal;
    private volatile boolean terminated;
    private volatile LockClient client;

    public Supervisor(Duration grace) {
        this.grace = grace;
    }

    /** Catches SIGINT and SIGTERM, and adds the shutdown hook. */
    public void installSignalHandlers() {
        for (String name : new String[] {"INT", "TERM"}) {
            try {
                Signal.handle(new Signal(name), s -> onSignal(s.getNumber()));
            } catch (IllegalArgumentException e) {
                // The JVM reserves this signal (for example -Xrs): the shutdown hook still cleans up.
            }
        }
        Runtime.getRuntime().addShutdownHook(new Thread(this::onShutdown, "locksmith-shutdown"));
    }

    /** The client to close, whatever ends the JVM: closing it releases the lock it holds. */
    public void closeOnExit(LockClient c) {
        this.client = c;
    }

    /** Starts the child, or returns null if a signal came first. */
    public Process start(ProcessBuilder pb) throws IOException {
        state.lock();
        try {
            if (signal != 0) {
                // The signal may have interrupted this thread after the grant: clear that, so the release that
                // follows is not cut short by the store client seeing an interrupt.
                Thread.interrupted();
                return null;
            }
            child = pb.start();
            return child;
        } finally {
            state.unlock();
        }
    }

    /** Waits for the child to end and returns its status (128 + N if a signal N killed it). */
    public int awaitChild() {
        while (true) {
            try {
                return child.waitFor();
            } catch (InterruptedException e) {
                // Only signals interrupt this thread, and they have told the child already: keep waiting for it.
            }
        }
    }

    /** SIGTERM to the child now, SIGKILL after the grace period if it is still running. Never blocks. */
    public void terminate() {
        Process c;
        state.lock();
        try {
            c = child;
        } finally {
            state.unlock();
        }
        if (c == null || !c.isAlive()) {
            return;
        }
        terminated = true;
        c.destroy();
        timer.schedule(
                () -> {
                    if (c.isAlive()) {
                        c.destroyForcibly();
                    }
                },
                grace.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    /** Whether the child was sent SIGTERM by {@link #terminate()}. */
    public boolean terminated() {
        return terminated;
    }

    /** Whether locksmith got SIGINT or SIGTERM. */
    public boolean signalled() {
        return signal != 0;
    }

    /** 128 + the number of the signal locksmith got. */
    public int signalStatus() {
        return ExitStatus.SIGNAL_BASE + signal;
    }

    private void onSignal(int number) {
        boolean hasChild;
        state.lock();
        try {
            if (signal == 0) {
                signal = number;
            }
            hasChild = child != null;
        } finally {
            state.unlock();
        }
        if (hasChild) {
            terminate();
        } else {
            mainThread.interrupt(); // stop waiting for the lock
        }
        // Should the main thread not finish (it always should), still end within a bounded time with the lock
        // released: closing the client releases every lease it holds.
        timer.schedule(
                () -> {
                    killNow();
                    closeClient();
                    Runtime.getRuntime().halt(signalStatus());
                },
                grace.toMillis() + 5000,
                TimeUnit.MILLISECONDS);
    }

    private void onShutdown() {
        Process c = child;
        if (c != null && c.isAlive()) {
            c.destroy();
            try {
                if (!c.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                    c.destroyForcibly();
                }
            } catch (InterruptedException e) {
                c.destroyForcibly();
            }
        }
        closeClient();
    }

    private void killNow() {
        Process c = child;
        if (c != null && c.isAlive()) {
            c.destroyForcibly();
        }
    }

    private void closeClient() {
        LockClient c = client;
        if (c != null) {
            try {
                c.close();
            } catch (RuntimeException e) {
                // The store frees the lock by itself when the session or lease ends.
            }
        }
    }
}
