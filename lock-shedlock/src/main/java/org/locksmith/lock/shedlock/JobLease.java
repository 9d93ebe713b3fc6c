package org.locksmith.lock.shedlock;

import java.util.Objects;
import java.util.function.Consumer;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockLostException;

/**
 * What {@link LocksmithLockProvider#currentLease()} returns: the provider's detached lease, seen from the job. Valid
 * only while the provider still holds it within lockAtMostFor; its loss listeners also hear of the cut at
 * lockAtMostFor; it cannot be released from here (ShedLock unlocks it).
 */
final class JobLease implements LockLease {
    private final HeldLock held;

    JobLease(HeldLock held) {
        this.held = held;
    }

    @Override
    public String key() {
        return held.granted().key();
    }

    @Override
    public long fencingToken() {
        return held.granted().fencingToken();
    }

    @Override
    public boolean isValid() {
        return held.holding() && held.granted().isValid();
    }

    @Override
    public int holdCount() {
        return held.holding() ? held.granted().holdCount() : 0;
    }

    /**
     * Called once if the lock is lost in the store, or freed at lockAtMostFor before the job unlocked it.
     *
     * @throws UnsupportedOperationException if the client does not declare {@code LOSS_DETECTION}
     */
    @Override
    public void onLost(Consumer<? super LockLostException> listener) {
        Objects.requireNonNull(listener, "listener");
        // The lease's own check: without LOSS_DETECTION a store loss would go unheard, so refuse, as LockLease does.
        held.granted().onLost(e -> {});
        held.addLossListener(listener);
    }

    @Override
    public void release() {
        throw new IllegalMonitorStateException("The lease of ShedLock lock '" + key()
                + "' is held by its provider: unlock it through ShedLock (SimpleLock.unlock), as"
                + " its LockingTaskExecutor does when the job ends");
    }

    @Override
    public void close() {
        release();
    }
}
