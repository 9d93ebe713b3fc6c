package com.example.locks;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.LockBackend;

/**
 * The worked example of a third-party backend in docs/writing-a-backend.md: a "store" that is a map in this JVM. It uses only the public
 * SPI; the shared core adds reentrancy, deadlines, interruption, close and key checks.
 */
public final class InMemoryLockBackend implements LockBackend {

    /** The shared store: every client opened on one Store contends for the same keys. */
    public static final class Store {
        final ReentrantLock lock = new ReentrantLock();
        final Condition freed = lock.newCondition();
        final Map<String, String> owners = new HashMap<>();
        final Map<String, Long> tokens = new HashMap<>();

        /** How many records the store holds for key (for the TCK's cleanup contract). */
        public int entries(String key) {
            lock.lock();
            try {
                return owners.containsKey(key) ? 1 : 0;
            } finally {
                lock.unlock();
            }
        }
    }

    private final Store store;

    public InMemoryLockBackend(Store store) {
        this.store = store;
    }

    @Override
    public String name() {
        return "example-memory";
    }

    @Override
    public Set<LockFeature> features() {
        return Set.of(LockFeature.REENTRANT, LockFeature.FENCING, LockFeature.BLOCKING_WAKEUP);
    }

    @Override
    public Duration leaseTime() {
        return Duration.ZERO; // locks never expire
    }

    @Override
    public Duration renewInterval() {
        return Duration.ZERO; // nothing to renew
    }

    @Override
    public BackendLease acquire(AcquireRequest request) throws InterruptedException {
        request.onCancel(this::wakeAll); // deadline, interrupt or close: wake the wait below
        store.lock.lock();
        try {
            while (store.owners.containsKey(request.key())) {
                long left = request.remainingNanos();
                if (left <= 0 || request.isCancelled()) {
                    return null; // nothing of this attempt remains in the store
                }
                store.freed.awaitNanos(left); // InterruptedException: likewise nothing remains
            }
            store.owners.put(request.key(), request.ownerId());
            long token = store.tokens.merge(request.key(), 1L, Long::sum);
            return new Lease(request.key(), request.ownerId(), token, System.nanoTime());
        } finally {
            store.lock.unlock();
        }
    }

    private void wakeAll() {
        store.lock.lock();
        try {
            store.freed.signalAll();
        } finally {
            store.lock.unlock();
        }
    }

    @Override
    public void close() {}

    private final class Lease implements BackendLease {
        private final String key;
        private final String owner;
        private final long token;
        private final long confirmedAt;

        Lease(String key, String owner, long token, long confirmedAt) {
            this.key = key;
            this.owner = owner;
            this.token = token;
            this.confirmedAt = confirmedAt;
        }

        @Override
        public long fencingToken() {
            return token;
        }

        @Override
        public long confirmedAtNanos() {
            return confirmedAt;
        }

        @Override
        public boolean release() {
            store.lock.lock();
            try {
                if (!owner.equals(store.owners.get(key))) {
                    return false; // owner check: never free someone else's lock
                }
                store.owners.remove(key);
                store.freed.signalAll();
                return true;
            } finally {
                store.lock.unlock();
            }
        }
    }
}
