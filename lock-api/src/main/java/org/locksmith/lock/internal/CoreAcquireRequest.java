package org.locksmith.lock.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.spi.AcquireRequest;

/**
 * One attempt of one thread; also the channel through which a backend reports the grant lost later.
 *
 * <p>Cancel actions run on the client's helper threads, never on the watchdog, so that a slow one delays neither
 * another waiter's cancellation nor an expiry check; and {@link #finish()} waits for a running one, so that no
 * action of an attempt runs after the attempt returned.
 */
final class CoreAcquireRequest implements AcquireRequest {
    private static final long ACTION_WAIT_WARN_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final String key;
    private final String ownerId;
    private final long deadlineNanos;
    private final boolean isTry;
    private final boolean interruptible;
    private final Thread requester;
    private final ScheduledExecutorService watchdog;
    private final Executor helpers;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition actionsDone = lock.newCondition();
    /** True while cancel actions run; guarded by {@link #lock}. */
    private boolean actionsRunning;
    /** Set once the attempt returned; guarded by {@link #lock}. */
    private boolean finished;
    /** Set when close() interrupted the requester to end a wait that watches no cancel action. */
    private volatile boolean interruptedByClose;

    private final List<Runnable> cancelActions = new ArrayList<>(1);
    /** The backend's last word on why it does not grant, other than a holder; null if it gave none. */
    private volatile String refusal;

    private volatile boolean cancelled;
    private ScheduledFuture<?> watch;
    private CoreLease lease;
    private LockLostException lostBeforeAttached;

    CoreAcquireRequest(
            String key,
            String ownerId,
            long deadlineNanos,
            boolean isTry,
            boolean interruptible,
            Thread requester,
            ScheduledExecutorService watchdog,
            Executor helpers) {
        this.key = key;
        this.ownerId = ownerId;
        this.deadlineNanos = deadlineNanos;
        this.isTry = isTry;
        this.interruptible = interruptible;
        this.requester = requester;
        this.watchdog = watchdog;
        this.helpers = helpers;
    }

    @Override
    public String key() {
        return key;
    }

    @Override
    public String ownerId() {
        return ownerId;
    }

    @Override
    public long deadlineNanos() {
        return deadlineNanos;
    }

    @Override
    public long remainingNanos() {
        if (isTry) {
            return 0;
        }
        if (deadlineNanos == Long.MAX_VALUE) {
            return Long.MAX_VALUE;
        }
        return deadlineNanos - System.nanoTime();
    }

    @Override
    public boolean isTry() {
        return isTry;
    }

    @Override
    public boolean isInterruptible() {
        return interruptible;
    }

    @Override
    public void refusedBecause(String reason) {
        refusal = java.util.Objects.requireNonNull(reason, "reason");
    }

    /** What the backend last gave as {@link #refusedBecause}, or null. */
    String refusal() {
        return refusal;
    }

    @Override
    public boolean isCancelled() {
        return cancelled || (!isTry && ((interruptible && requester.isInterrupted()) || remainingNanos() <= 0));
    }

    @Override
    public void onCancel(Runnable action) {
        boolean runNow;
        lock.lock();
        try {
            runNow = cancelled;
            if (!runNow) {
                cancelActions.add(action);
                if (watch == null && !isTry) {
                    // A thread blocked in an uninterruptible store call cannot notice its own interrupt: watch it.
                    watch = watchdog.scheduleWithFixedDelay(
                            this::checkInterruptOrDeadline,
                            CANCEL_CHECK_MILLIS,
                            CANCEL_CHECK_MILLIS,
                            TimeUnit.MILLISECONDS);
                }
            }
        } finally {
            lock.unlock();
        }
        if (runNow) {
            action.run();
        }
    }

    private void checkInterruptOrDeadline() {
        if ((interruptible && requester.isInterrupted()) || remainingNanos() <= 0) {
            cancel();
        }
    }

    /**
     * Cancels the attempt (interrupt, deadline, client close) and has the backend's cancel actions run once, on a
     * helper thread; returns at once.
     */
    void cancel() {
        List<Runnable> actions;
        lock.lock();
        try {
            if (cancelled) {
                return;
            }
            cancelled = true;
            stopWatchLocked();
            if (finished || cancelActions.isEmpty()) {
                return;
            }
            actions = new ArrayList<>(cancelActions);
            cancelActions.clear();
            actionsRunning = true;
        } finally {
            lock.unlock();
        }
        try {
            helpers.execute(() -> runActions(actions));
        } catch (RejectedExecutionException e) {
            runActions(actions); // the client is closing: run them here rather than never
        }
    }

    private void runActions(List<Runnable> actions) {
        try {
            for (Runnable action : actions) {
                try {
                    action.run();
                } catch (RuntimeException e) {
                    CoreLockClient.LOG.log(System.Logger.Level.WARNING, "cancel action of " + key + " failed", e);
                }
            }
        } finally {
            lock.lock();
            try {
                actionsRunning = false;
                actionsDone.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Called when the backend returned: no more watching, no more cancel actions, and none still running (it waits
     * for one that is, keeping the thread's interrupt status).
     */
    void finish() {
        boolean interrupted = false;
        lock.lock();
        try {
            finished = true;
            cancelActions.clear();
            stopWatchLocked();
            long warnAt = System.nanoTime() + ACTION_WAIT_WARN_NANOS;
            boolean warned = false;
            while (actionsRunning) {
                try {
                    actionsDone.awaitNanos(TimeUnit.MILLISECONDS.toNanos(100));
                } catch (InterruptedException e) {
                    interrupted = true;
                }
                if (!warned && actionsRunning && System.nanoTime() - warnAt > 0) {
                    warned = true;
                    CoreLockClient.LOG.log(
                            System.Logger.Level.WARNING,
                            "A cancel action of key '" + key + "' has run for 10 s; the attempt waits for it to end"
                                    + " (cancel actions must not block)");
                }
            }
        } finally {
            lock.unlock();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Interrupts the requesting thread, still in the backend, to end a wait that close() could not end by its
     * cancel actions (a backend waiting on a {@code Condition} with a long timeout); the core clears that interrupt
     * when the attempt returns. Does nothing once the attempt returned or if the thread is interrupted already.
     */
    void interruptForClose() {
        lock.lock();
        try {
            if (finished || requester.isInterrupted()) {
                return;
            }
            interruptedByClose = true;
            requester.interrupt();
        } finally {
            lock.unlock();
        }
    }

    boolean interruptedByClose() {
        return interruptedByClose;
    }

    private void stopWatchLocked() {
        if (watch != null) {
            watch.cancel(false);
            watch = null;
        }
    }

    void attach(CoreLease lease) {
        LockLostException early;
        lock.lock();
        try {
            this.lease = lease;
            early = lostBeforeAttached;
        } finally {
            lock.unlock();
        }
        if (early != null) {
            lease.markLost(early);
        }
    }

    @Override
    public void reportLost(String reason, Throwable cause) {
        LockLostException lost = new LockLostException("Lease of key '" + key + "' lost: " + reason, cause);
        CoreLease target;
        lock.lock();
        try {
            target = lease;
            if (target == null && lostBeforeAttached == null) {
                // The session died between the store's grant and the core wrapping it: remember it.
                lostBeforeAttached = lost;
            }
        } finally {
            lock.unlock();
        }
        if (target != null) {
            target.markLost(lost);
        }
    }
}
