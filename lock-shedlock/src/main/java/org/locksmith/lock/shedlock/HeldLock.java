package org.locksmith.lock.shedlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockLostException;

/**
 * One granted ShedLock lock: a detached lease, which any thread may release once, and its two deadlines, watched by
 * one task on the provider's timer. A ShedLock lock outlives the job's own hold ({@code lockAtLeastFor}) and ends by
 * itself ({@code lockAtMostFor}), so whichever comes first of the job's unlock past lockAtLeastFor, the timer at a
 * deadline, a loss or close releases the lease, and only that one.
 */
final class HeldLock {
    static final System.Logger LOG = System.getLogger(LocksmithLockProvider.class.getName());

    /**
     * How long unlock and extend wait for a release that another thread (the timer, close) is making; its store call
     * is bounded by the client's own timeouts, far shorter, so this only keeps a broken client from hanging the job.
     */
    static final Duration RELEASE_WAIT = Duration.ofSeconds(30);

    private final LockLease lease;
    private final ScheduledExecutorService timer;
    private final Consumer<HeldLock> onReleased;
    private final ReentrantLock state = new ReentrantLock();
    private final List<Consumer<? super LockLostException>> listeners = new ArrayList<>();
    private final CountDownLatch releasedInStore = new CountDownLatch(1);
    private final JobLease view = new JobLease(this);

    // Guarded by state.
    private long atMostNanos;
    private long atLeastNanos;
    private boolean unlockRequested;
    private boolean ended; // closed or lost: released whatever the deadlines say
    private boolean releasing; // the one release of the lease is claimed
    private LockLostException loss; // set once, when the lease was lost or cut at lockAtMostFor before unlock
    private ScheduledFuture<?> deadline;

    HeldLock(
            LockLease lease,
            ScheduledExecutorService timer,
            long atMostNanos,
            long atLeastNanos,
            Consumer<HeldLock> onReleased) {
        this.lease = lease;
        this.timer = timer;
        this.atMostNanos = atMostNanos;
        this.atLeastNanos = atLeastNanos;
        this.onReleased = onReleased;
    }

    /**
     * Starts watching lockAtMostFor (a lock granted past it is freed at once) and, with {@code lossDetection}, the
     * lease.
     *
     * @return false if the lock ended before the caller saw the grant (lost at once, or its provider closed): the
     *     job must not run, and the lock is released
     * @throws RejectedExecutionException if the timer was shut down (the provider was closed);
     *     the lock is released
     */
    boolean start(boolean lossDetection) {
        RejectedExecutionException rejected = null;
        state.lock();
        try {
            schedule(atMostNanos);
        } catch (RejectedExecutionException e) {
            rejected = e;
        } finally {
            state.unlock();
        }
        if (rejected != null) {
            end();
            throw rejected;
        }
        if (lossDetection) {
            lease.onLost(this::lost);
        }
        state.lock();
        try {
            return !ended;
        } finally {
            state.unlock();
        }
    }

    /**
     * Guarded by state: the timer task now runs at {@code whenNanos} (System.nanoTime), and no other. Only
     * {@link #start} can meet a shut-down timer: the provider's close claims the release of every lock it holds
     * before it stops the timer, and nothing else schedules for a lock whose release is claimed.
     */
    private void schedule(long whenNanos) {
        if (deadline != null) {
            deadline.cancel(false);
        }
        deadline = timer.schedule(this::onDeadline, whenNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
    }

    /** The next deadline that ends the lock: lockAtMostFor, or lockAtLeastFor once unlocked if it comes first. */
    private long nextDeadline() {
        return unlockRequested && atLeastNanos - atMostNanos < 0 ? atLeastNanos : atMostNanos;
    }

    private void onDeadline() {
        state.lock();
        try {
            if (releasing) {
                return;
            }
            long next = nextDeadline();
            if (System.nanoTime() - next < 0) {
                schedule(next); // moved by extend or unlock after this run was due
                return;
            }
        } finally {
            state.unlock();
        }
        releaseNow(false);
    }

    /**
     * Claims the release and makes it on this thread, reporting a loss first if the job did not unlock: the lock is
     * free in the store when this returns. If another thread claimed it, waits for that release if {@code await}.
     */
    private void releaseNow(boolean await) {
        List<Consumer<? super LockLostException>> toCall = List.of();
        boolean claimed;
        state.lock();
        try {
            claimed = !releasing;
            releasing = true;
            if (claimed) {
                if (deadline != null) {
                    deadline.cancel(false);
                }
                if (!unlockRequested && loss == null) {
                    loss = new LockLostException("ShedLock lock '" + lease.key()
                            + "' reached its lockAtMostFor (or its provider was closed) before the job unlocked"
                            + " it; it was released and another node may hold it now");
                    toCall = new ArrayList<>(listeners);
                }
            }
        } finally {
            state.unlock();
        }
        if (!claimed) {
            if (await) {
                awaitReleased();
            }
            return;
        }
        notifyLoss(toCall);
        try {
            lease.release();
        } catch (LockLostException e) {
            lost(e); // already reported where the client detects losses; otherwise this is the first sign
        } catch (LockBackendException | IllegalStateException | IllegalMonitorStateException e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "Could not release ShedLock lock '" + lease.key() + "'; the store frees it by itself: " + e);
        } finally {
            releasedInStore.countDown();
            onReleased.accept(this);
        }
    }

    private void awaitReleased() {
        boolean interrupted = false;
        long deadlineNanos = System.nanoTime() + RELEASE_WAIT.toNanos();
        while (true) {
            try {
                if (!releasedInStore.await(deadlineNanos - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                    LOG.log(
                            System.Logger.Level.WARNING,
                            "ShedLock lock '" + lease.key() + "' was not released within " + RELEASE_WAIT
                                    + "; the store frees it by itself");
                }
                break;
            } catch (InterruptedException e) {
                interrupted = true; // unlock must not be cut short: the caller expects the lock free
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** The lease's loss listener, on a core thread that must not block: the release goes to the timer. */
    private void lost(LockLostException cause) {
        List<Consumer<? super LockLostException>> toCall = List.of();
        state.lock();
        try {
            ended = true;
            if (loss == null) {
                loss = cause;
                toCall = new ArrayList<>(listeners);
            }
            if (!releasing) {
                schedule(System.nanoTime());
            }
        } finally {
            state.unlock();
        }
        notifyLoss(toCall);
    }

    private void notifyLoss(List<Consumer<? super LockLostException>> toCall) {
        for (Consumer<? super LockLostException> listener : toCall) {
            callListener(listener);
        }
    }

    private void callListener(Consumer<? super LockLostException> listener) {
        try {
            listener.accept(loss());
        } catch (Throwable t) { // a listener must not stop the others, nor the release
            LOG.log(System.Logger.Level.WARNING, "A loss listener of ShedLock lock '" + lease.key() + "' threw", t);
        }
    }

    /** SimpleLock.unlock: ends the job's hold; releases now, on this thread, if lockAtLeastFor has passed. */
    void unlock() {
        boolean now;
        state.lock();
        try {
            unlockRequested = true;
            now = ended || releasing || System.nanoTime() - atLeastNanos >= 0;
            if (!now) {
                schedule(nextDeadline());
            }
        } finally {
            state.unlock();
        }
        if (now) {
            releaseNow(true);
        }
    }

    /**
     * SimpleLock.extend: new deadlines from now, if the lock is still held.
     *
     * @return false if it is no longer held; it is then released in the store
     */
    boolean extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
        state.lock();
        try {
            long now = System.nanoTime();
            if (!releasing && !ended && now - atMostNanos < 0 && lease.isValid()) {
                atMostNanos = now + lockAtMostFor.toNanos();
                atLeastNanos = now + Math.max(0, lockAtLeastFor.toNanos());
                schedule(atMostNanos);
                return true;
            }
            ended = true;
        } finally {
            state.unlock();
        }
        releaseNow(true);
        return false;
    }

    /** Close: release now, on this thread, whatever the deadlines say. */
    void end() {
        state.lock();
        try {
            ended = true;
        } finally {
            state.unlock();
        }
        releaseNow(false);
    }

    /** Whether the job may still be running under this lock: neither unlocked nor freed in the store. */
    boolean current() {
        state.lock();
        try {
            return !unlockRequested && !releasing;
        } finally {
            state.unlock();
        }
    }

    LockLease lease() {
        return view;
    }

    // The view's accessors.

    LockLease granted() {
        return lease;
    }

    boolean holding() {
        state.lock();
        try {
            return !releasing && !ended && System.nanoTime() - atMostNanos < 0;
        } finally {
            state.unlock();
        }
    }

    LockLostException loss() {
        state.lock();
        try {
            return loss;
        } finally {
            state.unlock();
        }
    }

    void addLossListener(Consumer<? super LockLostException> listener) {
        boolean callNow;
        state.lock();
        try {
            callNow = loss != null;
            if (!callNow) {
                listeners.add(listener);
            }
        } finally {
            state.unlock();
        }
        if (callNow) {
            callListener(listener);
        }
    }
}
