package org.locksmith.lock;

import java.time.Duration;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.LockBackend;

/**
 * An in-memory backend for the core's own tests: it counts every call the core makes, so tests can prove that
 * re-entry costs no round trip, and it can pretend to be uninterruptible or to lose leases.
 */
final class MemoryBackend implements LockBackend {
    final AtomicInteger acquireCalls = new AtomicInteger();
    final AtomicInteger releaseCalls = new AtomicInteger();
    final AtomicInteger renewCalls = new AtomicInteger();
    final AtomicInteger closeCalls = new AtomicInteger();
    final AtomicLong tokens = new AtomicLong();

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final Map<String, Grant> holders = new HashMap<>();
    private final Set<LockFeature> features;
    private final Duration leaseTime;
    private final Duration renewInterval;
    private int waiters;

    /** When true, waits ignore interrupts and only stop through AcquireRequest.onCancel, like a socket read. */
    volatile boolean uninterruptible;
    /** When true, renewals report every lease lost. */
    volatile boolean refuseRenewals;
    /** When true, renewals fail as if the store were unreachable. */
    volatile boolean storeDown;

    MemoryBackend() {
        this(EnumSet.of(LockFeature.REENTRANT, LockFeature.FENCING), Duration.ZERO, Duration.ZERO);
    }

    MemoryBackend(Set<LockFeature> features, Duration leaseTime, Duration renewInterval) {
        this.features = features;
        this.leaseTime = leaseTime;
        this.renewInterval = renewInterval;
    }

    final class Grant implements BackendLease {
        final String key;
        final String owner;
        final long token;
        final long confirmedAt;
        final AcquireRequest request;

        Grant(String key, String owner, long token, long confirmedAt, AcquireRequest request) {
            this.key = key;
            this.owner = owner;
            this.token = token;
            this.confirmedAt = confirmedAt;
            this.request = request;
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
        public boolean renew() {
            renewCalls.incrementAndGet();
            if (storeDown) {
                throw new LockBackendException("memory store down");
            }
            return !refuseRenewals && isHolder();
        }

        @Override
        public boolean release() {
            releaseCalls.incrementAndGet();
            lock.lock();
            try {
                if (holders.get(key) != this) {
                    return false;
                }
                holders.remove(key);
                changed.signalAll();
                return true;
            } finally {
                lock.unlock();
            }
        }

        boolean isHolder() {
            lock.lock();
            try {
                return holders.get(key) == this;
            } finally {
                lock.unlock();
            }
        }
    }

    @Override
    public String name() {
        return "memory";
    }

    @Override
    public Set<LockFeature> features() {
        return features;
    }

    @Override
    public Duration leaseTime() {
        return leaseTime;
    }

    @Override
    public Duration renewInterval() {
        return renewInterval;
    }

    @Override
    public BackendLease acquire(AcquireRequest request) throws InterruptedException {
        acquireCalls.incrementAndGet();
        long sentAt = System.nanoTime();
        if (uninterruptible) {
            request.onCancel(() -> {
                lock.lock();
                try {
                    changed.signalAll();
                } finally {
                    lock.unlock();
                }
            });
        }
        lock.lock();
        try {
            waiters++;
            try {
                while (holders.containsKey(request.key())) {
                    long left = request.remainingNanos();
                    if (left <= 0 || (uninterruptible && request.isCancelled())) {
                        return null;
                    }
                    if (uninterruptible) {
                        // Like a socket read: ignores the interrupt and, unlike awaitUninterruptibly, does not
                        // clear it; only the core's cancel action (which sets isCancelled) ends the wait.
                        lock.unlock();
                        try {
                            LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(5));
                        } finally {
                            lock.lock();
                        }
                    } else {
                        changed.await(Math.min(left, TimeUnit.SECONDS.toNanos(1)), TimeUnit.NANOSECONDS);
                    }
                }
            } finally {
                waiters--;
            }
            Grant g = new Grant(request.key(), request.ownerId(), tokens.incrementAndGet(), sentAt, request);
            holders.put(request.key(), g);
            return g;
        } finally {
            lock.unlock();
        }
    }

    /** Drops the key's state behind its holder's back and reports the loss, as a session-bound store would. */
    void loseSession(String key) {
        Grant g;
        lock.lock();
        try {
            g = holders.remove(key);
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        if (g != null) {
            g.request.reportLost("session expired", null);
        }
    }

    int waiters() {
        lock.lock();
        try {
            return waiters;
        } finally {
            lock.unlock();
        }
    }

    boolean isHeld(String key) {
        lock.lock();
        try {
            return holders.containsKey(key);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void close() {
        closeCalls.incrementAndGet();
    }
}
