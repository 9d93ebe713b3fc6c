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
 *
 * <p>A waiting request costs nothing while nothing happens: its deadline is one entry in the watchdog's timer queue
 * (shared by every request of the client), which fires once, at the deadline; an interrupt of the requesting thread
 * is heard when it happens, through an {@link InterruptHook} armed on that thread; close() and a cancelled future
 * call {@link #cancel()} themselves. Only a backend that registers its cancel action from another thread than the
 * requester's gets the interrupt noticed by a check every {@value AcquireRequest#CANCEL_CHECK_MILLIS} ms instead.
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
    /** Whether the deadline timer (and interrupt watch) started; guarded by {@link #lock}. */
    private boolean watching;
    /** Fires once at the deadline; guarded by {@link #lock}. */
    private ScheduledFuture<?> deadlineTimer;
    /** The interrupt check for a cancel action registered off the requester's thread; guarded by {@link #lock}. */
    private ScheduledFuture<?> interruptCheck;
    /** Armed on the requester's thread while it may block in the backend; touched by that thread only. */
    private InterruptHook interruptHook;

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
        boolean onRequester = Thread.currentThread() == requester;
        lock.lock();
        try {
            runNow = cancelled;
            if (!runNow) {
                cancelActions.add(action);
                if (!watching && !isTry) {
                    watching = true;
                    startWatchLocked(onRequester);
                }
            }
        } finally {
            lock.unlock();
        }
        if (runNow) {
            action.run();
        } else if (interruptible && !isTry && onRequester) {
            // Armed (again) on every registration, right before the backend blocks: a store call that used an
            // interruptible channel on this thread since then has cleared the thread's one interrupt registration.
            if (interruptHook == null) {
                interruptHook = new InterruptHook(this::cancelFromInterrupt);
            }
            interruptHook.arm(); // an interrupt that came already cancels at once
        }
    }

    /**
     * The deadline timer, once per request: one entry in the watchdog's queue, nothing to do until it fires. An
     * interrupt is heard by the hook the requester arms; from another thread, a registration cannot arm it, and the
     * thread's status is checked on a timer instead.
     */
    private void startWatchLocked(boolean onRequester) {
        try {
            if (deadlineNanos != Long.MAX_VALUE) {
                deadlineTimer = watchdog.schedule(
                        this::cancel, Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
            if (interruptible && !onRequester) {
                interruptCheck = watchdog.scheduleWithFixedDelay(
                        this::checkInterrupt, CANCEL_CHECK_MILLIS, CANCEL_CHECK_MILLIS, TimeUnit.MILLISECONDS);
            }
        } catch (RejectedExecutionException closing) {
            // close() cancels every waiting request itself
        }
    }

    /**
     * Runs inside {@code Thread.interrupt()}, on the interrupting thread and under the JDK's interrupt locks: the
     * cancellation itself runs on a helper, so that this request's lock is never taken under them (close() holds
     * it while it interrupts the requester).
     */
    private void cancelFromInterrupt() {
        try {
            helpers.execute(this::cancel);
        } catch (RejectedExecutionException closing) {
            // close() cancels every waiting request itself
        }
    }

    private void checkInterrupt() {
        if (requester.isInterrupted()) {
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
        if (interruptHook != null && Thread.currentThread() == requester) {
            interruptHook.disarm();
        }
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
        if (deadlineTimer != null) {
            deadlineTimer.cancel(false);
            deadlineTimer = null;
        }
        if (interruptCheck != null) {
            interruptCheck.cancel(false);
            interruptCheck = null;
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
