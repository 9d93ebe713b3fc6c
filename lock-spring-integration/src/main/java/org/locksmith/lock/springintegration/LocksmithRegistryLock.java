package org.locksmith.lock.springintegration;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * One key of a {@link LocksmithLockRegistry}: Locksmith's {@link org.locksmith.lock.DistributedLock#asLock()} for
 * that key, with Spring Integration's {@link DistributedLock} methods. Owned by the pair (client, thread), reentrant
 * where the client declares {@link LockFeature#REENTRANT}, and sharing hold counts with every other lock object of
 * the same key and client.
 *
 * <p>The {@link Lock} methods keep the contract of {@link org.locksmith.lock.DistributedLock#asLock()}: {@link
 * #lock()} waits uninterruptibly; {@link #unlock()} throws {@link IllegalMonitorStateException} when the thread does
 * not hold the key and {@link org.locksmith.lock.LockLostException} when the lease was lost before it (the hold is
 * released all the same); store failures surface as {@link org.locksmith.lock.LockBackendException}; {@link
 * #newCondition()} throws {@link UnsupportedOperationException}. Instances are cheap and thread-safe.
 */
public final class LocksmithRegistryLock implements DistributedLock {
    private final org.locksmith.lock.DistributedLock lock;
    private final Lock delegate;

    LocksmithRegistryLock(org.locksmith.lock.DistributedLock lock) {
        this.lock = lock;
        this.delegate = lock.asLock();
    }

    /**
     * The Locksmith key of this lock.
     *
     * @return the registry's prefix followed by the lock key
     */
    public String key() {
        return lock.key();
    }

    /**
     * The lease through which the current thread holds this key: its fencing token (where the client declares
     * {@link LockFeature#FENCING}), {@code isValid()} and {@code onLost(...)}. Release through {@link #unlock()}, not
     * through the lease, so that the hold counts stay balanced. No I/O.
     *
     * @return the lease, or empty if the current thread does not hold the key with a valid lease, or the client does
     *     not declare {@link LockFeature#REENTRANT} (the lease is then reachable only through Locksmith's own API)
     */
    public Optional<LockLease> lease() {
        if (!lock.isHeldByCurrentThread()) {
            return Optional.empty();
        }
        // A re-entry by the holding thread returns the held lease without a round trip; give the extra hold back.
        try {
            Optional<LockLease> lease = lock.tryAcquire();
            lease.ifPresent(LockLease::release);
            return lease;
        } catch (IllegalStateException | org.locksmith.lock.LockLostException e) {
            return Optional.empty(); // not reentrant, closed, or lost since the check above
        }
    }

    @Override
    public void lock() {
        delegate.lock();
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        delegate.lockInterruptibly();
    }

    @Override
    public boolean tryLock() {
        return delegate.tryLock();
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return delegate.tryLock(time, unit);
    }

    @Override
    public void unlock() {
        delegate.unlock();
    }

    /**
     * Not supported: a condition cannot be waited on across processes.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    public Condition newCondition() {
        return delegate.newCondition();
    }

    /**
     * {@link #lock()}. Locksmith renews a held lease for as long as the thread holds it, so the time to live is
     * checked but has nothing to set (see {@link LocksmithLockRegistry}).
     *
     * @throws IllegalArgumentException if ttl is not positive
     * @throws NullPointerException if ttl is null
     */
    @Override
    public void lock(Duration ttl) {
        checkTtl(ttl);
        lock();
    }

    /**
     * {@link #tryLock(long, TimeUnit)} with {@code waitTime}; the time to live is checked but has nothing to set, as
     * for {@link #lock(Duration)}.
     *
     * @throws IllegalArgumentException if ttl is not positive
     * @throws NullPointerException if an argument is null
     * @throws InterruptedException if the thread is interrupted before or while waiting
     */
    @Override
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        Objects.requireNonNull(waitTime, "waitTime");
        checkTtl(ttl);
        return tryLock(waitTime.toNanos(), TimeUnit.NANOSECONDS);
    }

    static void checkTtl(Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("ttl must be positive, got " + ttl);
        }
    }

    @Override
    public String toString() {
        return "LocksmithRegistryLock{" + lock.key() + "}";
    }
}
