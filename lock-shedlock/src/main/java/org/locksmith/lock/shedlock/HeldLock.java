package org.locksmith.lock.shedlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.locksmith.lock.DistributedLock;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockLostException;

/**
 * One ShedLock lock, acquired, held and released by one holder thread (the lease's owner), because a ShedLock lock
 * outlives the job's own hold ({@code lockAtLeastFor}) and ends by itself ({@code lockAtMostFor}), while a
 * Locksmith lease may only be released by the thread that acquired it. The job's thread only moves deadlines and
 * asks for the end; every wait here is bounded by a deadline.
 */
final class HeldLock implements Runnable {
    static final System.Logger LOG = System.getLogger(LocksmithLockProvider.class.getName());

    /**
     * How long unlock, extend, close and the grant wait for the holder thread; its store calls are bounded by the
     * client's own timeouts, far shorter, so this only keeps a broken client from hanging the job's thread.
     */
    static final Duration RELEASE_WAIT = Duration.ofSeconds(30);

    private enum Phase {
        ACQUIRING,
        REFUSED,
        HELD,
        RELEASING,
        RELEASED
    }

    private final DistributedLock lock;
    private final boolean lossDetection;
    private final Consumer<HeldLock> onFinished;
    private final ReentrantLock state = new ReentrantLock();
    private final Condition changed = state.newCondition();
    private final List<Consumer<? super LockLostException>> listeners = new ArrayList<>();

    // Guarded by state.
    private Phase phase = Phase.ACQUIRING;
    private long atMostNanos;
    private long atLeastNanos;
    private boolean unlockRequested;
    private boolean ended; // closed, abandoned or lost: release now, whatever the deadlines say
    private LockLease lease;
    private RuntimeException acquireFailure;
    private LockLostException loss; // set once, when the lease was lost or cut at lockAtMostFor before unlock

    private final JobLease view = new JobLease(this);

    HeldLock(
            DistributedLock lock,
            boolean lossDetection,
            long atMostNanos,
            long atLeastNanos,
            Consumer<HeldLock> onFinished) {
        this.lock = lock;
        this.lossDetection = lossDetection;
        this.atMostNanos = atMostNanos;
        this.atLeastNanos = atLeastNanos;
        this.onFinished = onFinished;
    }

    @Override
    public void run() {
        try {
            Optional<LockLease> got;
            try {
                got = lock.tryAcquire();
            } catch (RuntimeException e) {
                finishAcquire(null, e);
                return;
            }
            if (got.isEmpty()) {
                finishAcquire(null, null);
                return;
            }
            LockLease acquired = got.get();
            if (lossDetection) {
                acquired.onLost(this::lost);
            }
            finishAcquire(acquired, null);
            hold();
            release(acquired);
        } finally {
            onFinished.accept(this);
        }
    }

    private void finishAcquire(LockLease acquired, RuntimeException failure) {
        state.lock();
        try {
            lease = acquired;
            acquireFailure = failure;
            phase = acquired == null ? Phase.REFUSED : Phase.HELD;
            changed.signalAll();
        } finally {
            state.unlock();
        }
    }

    /** Waits until the lock must end: unlocked past lockAtLeastFor, lockAtMostFor passed, lost, or ended. */
    private void hold() {
        List<Consumer<? super LockLostException>> toCall = List.of();
        state.lock();
        try {
            while (true) {
                long now = System.nanoTime();
                if (ended || now - atMostNanos >= 0 || (unlockRequested && now - atLeastNanos >= 0)) {
                    break;
                }
                long until = unlockRequested && atLeastNanos - atMostNanos < 0 ? atLeastNanos : atMostNanos;
                try {
                    changed.awaitNanos(until - now);
                } catch (InterruptedException e) {
                    ended = true; // the pool is shutting down (close): release now
                }
            }
            phase = Phase.RELEASING;
            if (!unlockRequested && loss == null) {
                loss = new LockLostException("ShedLock lock '" + lock.key()
                        + "' reached its lockAtMostFor (or its provider was closed) before the job unlocked it;"
                        + " it was released and another node may hold it now");
                toCall = new ArrayList<>(listeners);
            }
        } finally {
            state.unlock();
        }
        notifyLoss(toCall);
    }

    private void release(LockLease acquired) {
        try {
            acquired.release();
        } catch (LockLostException e) {
            lost(e); // already reported where the client detects losses; otherwise this is the first sign
        } catch (LockBackendException | IllegalStateException | IllegalMonitorStateException e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "Could not release ShedLock lock '" + lock.key() + "'; the store frees it by itself: " + e);
        } finally {
            state.lock();
            try {
                phase = Phase.RELEASED;
                changed.signalAll();
            } finally {
                state.unlock();
            }
        }
    }

    private void lost(LockLostException cause) {
        List<Consumer<? super LockLostException>> toCall = List.of();
        state.lock();
        try {
            ended = true;
            changed.signalAll();
            if (loss == null) {
                loss = cause;
                toCall = new ArrayList<>(listeners);
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
        } catch (Throwable t) { // a listener must not stop the others, nor the holder
            LOG.log(System.Logger.Level.WARNING, "A loss listener of ShedLock lock '" + lock.key() + "' threw", t);
        }
    }

    /**
     * Waits for the holder's single attempt, which the client bounds by its own timeout; a grant that comes after
     * lockAtMostFor is returned all the same (ShedLock's contract: the lock was had), and the holder frees it at once.
     *
     * @return whether the lock was granted
     */
    boolean awaitGrant() {
        state.lock();
        try {
            long deadline = System.nanoTime() + RELEASE_WAIT.toNanos();
            boolean interrupted = false;
            while (phase == Phase.ACQUIRING) {
                long left = deadline - System.nanoTime();
                if (left <= 0 || interrupted) {
                    // Given up: if the attempt still succeeds, the holder releases at once.
                    ended = true;
                    changed.signalAll();
                    if (interrupted) {
                        Thread.currentThread().interrupt();
                        return false;
                    }
                    throw new LockBackendException("No answer from the lock store within " + RELEASE_WAIT
                            + " to the attempt on '" + lock.key() + "'");
                }
                try {
                    changed.awaitNanos(left);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (acquireFailure != null) {
                throw acquireFailure;
            }
            // Ended before the caller saw the grant (provider closed, or lost at once): the holder is releasing it,
            // so the job must not run. A grant past lockAtMostFor is still returned, as ShedLock expects.
            return phase != Phase.REFUSED && !ended;
        } finally {
            state.unlock();
        }
    }

    /** SimpleLock.unlock: ends the job's hold; returns once released if lockAtLeastFor has passed. */
    void unlock() {
        state.lock();
        try {
            unlockRequested = true;
            changed.signalAll();
            if (System.nanoTime() - atLeastNanos >= 0 || ended) {
                awaitReleased();
            }
        } finally {
            state.unlock();
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
            if (phase != Phase.HELD || ended || now - atMostNanos >= 0 || !lease.isValid()) {
                ended = true;
                changed.signalAll();
                awaitReleased();
                return false;
            }
            atMostNanos = now + lockAtMostFor.toNanos();
            atLeastNanos = now + Math.max(0, lockAtLeastFor.toNanos());
            changed.signalAll();
            return true;
        } finally {
            state.unlock();
        }
    }

    /** Close: release now, whatever the deadlines say. */
    void end() {
        state.lock();
        try {
            ended = true;
            changed.signalAll();
        } finally {
            state.unlock();
        }
    }

    private void awaitReleased() {
        long deadline = System.nanoTime() + RELEASE_WAIT.toNanos();
        boolean interrupted = false;
        while (phase != Phase.RELEASED && phase != Phase.REFUSED) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "ShedLock lock '" + lock.key() + "' was not released within " + RELEASE_WAIT
                                + "; the store frees it by itself");
                break;
            }
            try {
                changed.awaitNanos(left);
            } catch (InterruptedException e) {
                interrupted = true; // unlock must not be cut short: the caller expects the lock free
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Whether the job may still be running under this lock: neither unlocked nor freed in the store. */
    boolean current() {
        state.lock();
        try {
            return !unlockRequested && phase != Phase.RELEASED && phase != Phase.REFUSED;
        } finally {
            state.unlock();
        }
    }

    LockLease lease() {
        return view;
    }

    // The view's accessors.

    LockLease granted() {
        state.lock();
        try {
            return lease;
        } finally {
            state.unlock();
        }
    }

    boolean holding() {
        state.lock();
        try {
            return phase == Phase.HELD && !ended && System.nanoTime() - atMostNanos < 0;
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
