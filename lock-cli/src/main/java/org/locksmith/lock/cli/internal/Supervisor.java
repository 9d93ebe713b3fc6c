package org.locksmith.lock.cli.internal;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.cli.ExitStatus;
import sun.misc.Signal;

/**
 * Supervises the child of {@code locksmith run}: starts it in a process group of its own ({@link ProcessGroup}),
 * forwards SIGINT as SIGINT and SIGTERM as SIGTERM to that whole group, stops the group with SIGTERM when the lock
 * is lost, sends SIGKILL to whatever of the group still runs once the grace period has passed, and makes sure the
 * lock client is closed (which releases the lock) however the JVM ends.
 *
 * <p>SIGINT and SIGTERM are caught with {@code sun.misc.Signal} rather than a shutdown hook alone, because the exit
 * status must say which signal came (128 + its number) and the main thread must get the chance to release the
 * lock itself (a lease is owned by the thread that acquired it). A shutdown hook remains for the other ways the JVM
 * may end (SIGHUP, {@code System.exit}).
 */
public final class Supervisor {
    /** How long past the grace period a main thread that does not finish is given before the JVM is halted. */
    private static final long HALT_AFTER_GRACE_MS = 5000;

    /** How often, once the command has ended, the rest of a stopped group is looked at until it is gone. */
    private static final long GROUP_CHECK_MS = 25;

    private final Duration grace;
    private final Thread mainThread = Thread.currentThread();
    private final ReentrantLock state = new ReentrantLock();
    private final CountDownLatch killed = new CountDownLatch(1);
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "locksmith-signaller");
        t.setDaemon(true);
        return t;
    });
    private ProcessGroup child;
    private boolean stopRequested;
    private volatile int signal;
    private volatile boolean terminated;
    private volatile LockClient client;

    /** A supervisor whose children get {@code grace} between the first signal and SIGKILL. */
    public Supervisor(Duration grace) {
        this.grace = grace;
    }

    /** Catches SIGINT and SIGTERM, and adds the shutdown hook. */
    public void installSignalHandlers() {
        for (String name : new String[] {"INT", "TERM"}) {
            try {
                Signal.handle(new Signal(name), s -> onSignal(s.getName(), s.getNumber()));
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

    /**
     * Starts the child, or returns null if a signal came or {@link #terminate()} was called first (the lock was
     * lost before the command could start).
     */
    public Process start(ProcessBuilder pb) throws IOException {
        state.lock();
        try {
            if (signal != 0 || stopRequested) {
                // The signal may have interrupted this thread after the grant: clear that, so the release that
                // follows is not cut short by the store client seeing an interrupt. onSignal interrupts while it
                // holds this lock, so no interrupt can come after this point.
                Thread.interrupted();
                return null;
            }
            child = ProcessGroup.start(pb);
            return child.leader();
        } finally {
            state.unlock();
        }
    }

    /**
     * Waits for the child to end and returns its status (128 + N if a signal N killed it). If the child was told to
     * stop, also waits, at most until the SIGKILL at the end of the grace period, for the rest of its process group
     * (a background job of a shell ignores SIGINT, for example), so that nothing the command started outlives it.
     */
    public int awaitChild() {
        boolean interrupted = false;
        int status;
        while (true) {
            try {
                status = child.leader().waitFor();
                break;
            } catch (InterruptedException e) {
                // Only signals interrupt this thread, and they have told the child already: keep waiting for it.
                interrupted = true;
            }
        }
        if (terminated) {
            // The rest of the group may still be dying (a grandchild handling its SIGTERM). Look again every
            // GROUP_CHECK_MS rather than once: a single look that caught it alive made locksmith wait out the whole
            // grace period for a group that ended milliseconds later. The kernel offers no wait on a process group
            // that is not our child, so this is a bounded check, not a lock poll; it ends with the SIGKILL.
            long giveUpAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(grace.toMillis() + HALT_AFTER_GRACE_MS);
            while (child.anyAlive()) {
                try {
                    if (killed.await(GROUP_CHECK_MS, TimeUnit.MILLISECONDS)) {
                        break; // the SIGKILL at the end of the grace period went to whatever was left
                    }
                    if (System.nanoTime() - giveUpAt > 0) {
                        child.signal("KILL");
                        break;
                    }
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.interrupted(); // the signal is recorded; the release that follows must not see an interrupt
        }
        return status;
    }

    /** SIGTERM to the child's group now, SIGKILL after the grace period if any of it still runs. Never blocks. */
    public void terminate() {
        stop("TERM");
    }

    private void stop(String signalName) {
        ProcessGroup c;
        boolean first;
        state.lock();
        try {
            stopRequested = true;
            c = child;
            first = !terminated && c != null;
            if (c != null) {
                terminated = true;
            }
        } finally {
            state.unlock();
        }
        if (c == null) {
            return;
        }
        timer.execute(() -> c.signal(signalName));
        if (first) {
            timer.schedule(
                    () -> {
                        try {
                            if (c.anyAlive()) {
                                c.signal("KILL");
                            }
                        } finally {
                            killed.countDown();
                        }
                    },
                    grace.toMillis(),
                    TimeUnit.MILLISECONDS);
        }
    }

    /** Whether the child was told to stop (lock lost or a signal forwarded). */
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

    private void onSignal(String name, int number) {
        boolean hasChild;
        state.lock();
        try {
            if (signal == 0) {
                signal = number;
            }
            hasChild = child != null;
            if (!hasChild) {
                // Stop waiting for the lock. Under the lock, so that start() either sees the signal or runs first.
                mainThread.interrupt();
            }
        } finally {
            state.unlock();
        }
        if (hasChild) {
            stop(name); // the same signal: a command may treat Ctrl-C differently from a shutdown
        }
        // Should the main thread not finish (it always should), still end within a bounded time with the lock
        // released: closing the client releases every lease it holds.
        timer.schedule(
                () -> {
                    killNow();
                    closeClient();
                    Runtime.getRuntime().halt(signalStatus());
                },
                grace.toMillis() + HALT_AFTER_GRACE_MS,
                TimeUnit.MILLISECONDS);
    }

    private void onShutdown() {
        ProcessGroup c;
        state.lock();
        try {
            stopRequested = true;
            c = child;
        } finally {
            state.unlock();
        }
        // Only when the command still runs (the JVM ends abnormally): after a normal end, locksmith leaves alone
        // what the command left running in the background, as flock(1) does.
        if (c != null && c.leader().isAlive()) {
            c.signal("TERM");
            try {
                c.leader().waitFor(grace.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                // fall through to SIGKILL
            }
            if (c.anyAlive()) {
                c.signal("KILL");
            }
        }
        closeClient();
    }

    private void killNow() {
        ProcessGroup c = child;
        if (c != null && c.anyAlive()) {
            c.signal("KILL");
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
