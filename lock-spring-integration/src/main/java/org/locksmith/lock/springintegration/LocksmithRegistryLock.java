package org.locksmith.lock.springintegration;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.LockTimeoutException;
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
 *
 * <p>{@link #lock(Duration)} and {@link #tryLock(Duration, Duration)} take the lock for at most the time to live, as
 * Spring's registries do (see {@link #lock(Duration)}); the other methods take it until {@link #unlock()}, renewed in
 * the background. Either way the key excludes every other thread and node.
 */
public final class LocksmithRegistryLock implements DistributedLock {
    private final org.locksmith.lock.DistributedLock lock;
    private final Lock delegate;
    private final TtlHolds ttlHolds;

    LocksmithRegistryLock(org.locksmith.lock.DistributedLock lock, TtlHolds ttlHolds) {
        this.lock = lock;
        this.delegate = lock.asLock();
        this.ttlHolds = ttlHolds;
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
        TtlHolds.Hold hold = ttlHolds.mine(lock.key());
        if (hold != null) {
            return hold.ended() ? Optional.empty() : Optional.of(hold.lease());
        }
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

    /**
     * Re-enters the current thread's hold taken with a time to live, if it has one (keeping its end).
     *
     * @return false if it has none
     * @throws LockLostException if that hold has ended: its time to live ran out, or its lease was lost
     */
    private boolean reenterTtlHold(Duration newTtl) {
        TtlHolds.Hold hold = ttlHolds.mine(lock.key());
        if (hold == null) {
            return false;
        }
        if (hold.ended()) {
            throw ended();
        }
        TtlHolds.reenter(hold);
        if (newTtl != null) {
            hold.extend(newTtl);
        }
        return true;
    }

    private LockLostException ended() {
        return new LockLostException("The lock '" + lock.key() + "' that this thread took with a time to live has"
                + " ended (its time to live ran out, or its lease was lost); another holder may have it now");
    }

    @Override
    public void lock() {
        if (!reenterTtlHold(null)) {
            delegate.lock();
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        if (!reenterTtlHold(null)) {
            delegate.lockInterruptibly();
        }
    }

    @Override
    public boolean tryLock() {
        return reenterTtlHold(null) || delegate.tryLock();
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return reenterTtlHold(null) || delegate.tryLock(time, unit);
    }

    /**
     * Gives one hold back. The last unlock of a lock taken with a time to live releases it, or, if the time to live
     * ran out or its lease was lost before, throws {@link LockLostException} (the hold is given back all the same).
     *
     * @throws IllegalMonitorStateException if the current thread does not hold the key
     * @throws LockLostException as above, or if a lock taken without a time to live was lost
     */
    @Override
    public void unlock() {
        TtlHolds.Hold hold = ttlHolds.mine(lock.key());
        if (hold != null) {
            if (!ttlHolds.unlock(lock.key(), hold)) {
                throw ended();
            }
            return;
        }
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
     * Takes the lock for at most {@code ttl}, as Spring's own registries do: the lock ends {@code ttl} after it is
     * granted unless {@link #unlock()} comes first (or {@code renewLock(key, ttl)} moves the end). Until then Locksmith
     * renews the lease in the background as for any lock, so a crashed holder still frees it after the client's lease
     * time; at the end a timer releases it, after which {@link #lease()} is empty, a re-entry and the last {@link
     * #unlock()} throw {@link LockLostException}, as after a loss. Waits uninterruptibly, as {@link #lock()}.
     *
     * <p>A re-entry by the thread that holds the key with a time to live moves the end to {@code ttl} from now; a
     * re-entry of a hold taken without one (through {@link #lock()}) stays without one.
     *
     * @throws IllegalArgumentException if ttl is not positive
     * @throws NullPointerException if ttl is null
     * @throws LockLostException if the thread's hold with a time to live has already ended
     */
    @Override
    public void lock(Duration ttl) {
        checkTtl(ttl);
        if (reenterTtlHold(ttl)) {
            return;
        }
        if (lock.isHeldByCurrentThread()) {
            delegate.lock(); // re-entry of a hold without a time to live
            return;
        }
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    ttlHolds.start(lock.key(), lock.acquireDetached(WAIT_SLICE), ttl);
                    return;
                } catch (LockTimeoutException stillHeld) {
                    // wait on, as lock() does
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Waits up to {@code waitTime} for the lock and takes it for at most {@code ttl}, as {@link #lock(Duration)}.
     *
     * @return whether the lock was granted (or re-entered)
     * @throws IllegalArgumentException if ttl is not positive
     * @throws NullPointerException if an argument is null
     * @throws InterruptedException if the thread is interrupted before or while waiting
     * @throws LockLostException if the thread's hold with a time to live has already ended
     */
    @Override
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        Objects.requireNonNull(waitTime, "waitTime");
        checkTtl(ttl);
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        if (reenterTtlHold(ttl)) {
            return true;
        }
        if (lock.isHeldByCurrentThread()) {
            return delegate.tryLock(); // re-entry of a hold without a time to live
        }
        Optional<LockLease> lease;
        if (waitTime.isNegative() || waitTime.isZero()) {
            lease = lock.tryAcquireDetached();
        } else {
            try {
                lease = Optional.of(lock.acquireDetached(waitTime));
            } catch (LockTimeoutException timedOut) {
                lease = Optional.empty();
            }
        }
        lease.ifPresent(l -> ttlHolds.start(lock.key(), l, ttl));
        return lease.isPresent();
    }

    /** How long one uninterruptible wait of {@link #lock(Duration)} asks for before asking again. */
    private static final Duration WAIT_SLICE = Duration.ofSeconds(30);

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
