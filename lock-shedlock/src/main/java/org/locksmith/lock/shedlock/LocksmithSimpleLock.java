package org.locksmith.lock.shedlock;

import java.util.Optional;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/** The ShedLock side of a {@link HeldLock}; ShedLock's base class enforces "unlock or extend once". */
final class LocksmithSimpleLock extends AbstractSimpleLock {
    private final HeldLock held;

    LocksmithSimpleLock(LockConfiguration configuration, HeldLock held) {
        super(configuration);
        this.held = held;
    }

    @Override
    protected void doUnlock() {
        LocksmithLockProvider.forget(held);
        held.unlock();
    }

    @Override
    protected Optional<SimpleLock> doExtend(LockConfiguration newConfiguration) {
        if (!held.extend(newConfiguration.getLockAtMostFor(), newConfiguration.getLockAtLeastFor())) {
            LocksmithLockProvider.forget(held);
            return Optional.empty();
        }
        return Optional.of(new LocksmithSimpleLock(newConfiguration, held));
    }

    @Override
    public String toString() {
        return "LocksmithSimpleLock{" + lockConfiguration + '}';
    }
}
