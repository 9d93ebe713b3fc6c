package org.locksmith.lock.bench.contenders;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Lock;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.locksmith.lock.bench.Contender;

/**
 * A peer's {@link Lock} (Redisson's RLock, Spring's registry locks) as a benchmark handle.
 *
 * <p>A peer may answer a lock attempt with an exception that says its lock object went stale and a fresh one must be
 * obtained (Spring Integration's registries do when a lock object left their cache; their cache is read without
 * their own lock, so a concurrent {@code obtain} that grows it can make a lock in use look evicted). The handle then
 * does what the message says, once per attempt, within the same grant timeout, and prints the first occurrence.
 */
final class JucLockHandle implements Contender.Handle {
    private static final Predicate<RuntimeException> NEVER_STALE = e -> false;

    private final String contender;
    private final String key;
    private final Supplier<Lock> obtain;
    private final Predicate<RuntimeException> stale;
    private final AtomicBoolean staleReported;
    private Lock lock;

    JucLockHandle(String contender, String key, Lock lock) {
        this(contender, key, () -> lock, NEVER_STALE, new AtomicBoolean());
    }

    /**
     * @param obtain gives the peer's lock object for the key, again when the one in use went stale
     * @param stale whether an exception from {@link Lock#tryLock} says the lock object went stale
     * @param staleReported shared by the handles of one client, so that the first stale lock is printed once
     */
    JucLockHandle(
            String contender,
            String key,
            Supplier<Lock> obtain,
            Predicate<RuntimeException> stale,
            AtomicBoolean staleReported) {
        this.contender = contender;
        this.key = key;
        this.obtain = obtain;
        this.stale = stale;
        this.staleReported = staleReported;
        this.lock = obtain.get();
    }

    @Override
    public void lock() throws InterruptedException {
        long deadline = System.nanoTime() + Contender.GRANT_TIMEOUT.toNanos();
        boolean granted;
        try {
            granted = lock.tryLock(Contender.GRANT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RuntimeException e) {
            if (!stale.test(e)) {
                throw e;
            }
            if (staleReported.compareAndSet(false, true)) {
                System.out.println("[bench] " + contender + ": the lock object of " + key
                        + " went stale while in use; a fresh one was obtained: " + e);
            }
            lock = obtain.get();
            granted = lock.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
        if (!granted) {
            throw new IllegalStateException(
                    contender + " was not granted " + key + " within " + Contender.GRANT_TIMEOUT.toSeconds() + " s");
        }
    }

    @Override
    public void unlock() {
        lock.unlock();
    }
}
