package org.locksmith.lock.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.spi.AcquireRequest;

/** One attempt of one thread; also the channel through which a backend reports the grant lost later. */
final class CoreAcquireRequest implements AcquireRequest {
    private final String key;
    private final String ownerId;
    private final long deadlineNanos;
    private final boolean isTry;
    private final Thread requester;
    private final ScheduledExecutorService watchdog;

    private final ReentrantLock lock = new ReentrantLock();
    private final List<Runnable> cancelActions = new ArrayList<>(1);
    private volatile boolean cancelled;
    private ScheduledFuture<?> watch;
    private CoreLease lease;
    private LockLostException lostBeforeAttached;

    CoreAcquireRequest(
            String key,
            String ownerId,
            long deadlineNanos,
            boolean isTry,
            Thread requester,
            ScheduledExecutorService watchdog) {
        this.key = key;
        this.ownerId = ownerId;
        this.deadlineNanos = deadlineNanos;
        this.isTry = isTry;
        this.requester = requester;
        this.watchdog = watchdog;
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
    public boolean isCancelled() {
        return cancelled || (!isTry && (requester.isInterrupted() || remainingNanos() <= 0));
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
        if (requester.isInterrupted() || remainingNanos() <= 0) {
            cancel();
        }
    }

    /** Cancels the attempt (interrupt, deadline, client close) and runs the backend's cancel actions once. */
    void cancel() {
        List<Runnable> actions;
        lock.lock();
        try {
            if (cancelled) {
                return;
            }
            cancelled = true;
            actions = new ArrayList<>(cancelActions);
            cancelActions.clear();
            stopWatchLocked();
        } finally {
            lock.unlock();
        }
        for (Runnable action : actions) {
            try {
                action.run();
            } catch (RuntimeException e) {
                CoreLockClient.LOG.log(System.Logger.Level.WARNING, "cancel action of " + key + " failed", e);
            }
        }
    }

    /** Called when the backend returned: no more watching, no more cancel actions. */
    void finish() {
        lock.lock();
        try {
            cancelActions.clear();
            stopWatchLocked();
        } finally {
            lock.unlock();
        }
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
