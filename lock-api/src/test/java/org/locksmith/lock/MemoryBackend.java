package org.locksmith.lock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.LockBackend;
import org.locksmith.lock.spi.RenewalReport;

/**
 * An in-memory backend for the core's own tests: it counts every call the core makes, so tests can prove that
 * re-entry costs no round trip, it can pretend to be uninterruptible or to lose leases, and its hooks let a test
 * stop the core's threads at a chosen point, so that races are played out in a fixed order instead of by luck.
 *
 * <p>Public for the tests of the core's internals ({@code org.locksmith.lock.internal}).
 */
public final class MemoryBackend implements LockBackend {
    public final AtomicInteger acquireCalls = new AtomicInteger();
    public final AtomicInteger releaseCalls = new AtomicInteger();
    public final AtomicInteger renewCalls = new AtomicInteger();
    public final AtomicInteger closeCalls = new AtomicInteger();
    public final AtomicLong tokens = new AtomicLong();
    /** SPI violations seen: a lease renewed after its release, or released twice. */
    public final AtomicInteger renewedAfterRelease = new AtomicInteger();

    public final AtomicInteger repeatedReleases = new AtomicInteger();
    /** Keys the store still held when the core closed the backend; the core must release every lease first. */
    public final Set<String> heldAtClose = ConcurrentHashMap.newKeySet();

    /** Runs in {@link BackendLease#renew()} before it answers: a test blocks a renewal here. */
    public volatile Runnable renewHook = () -> {};
    /** Runs in {@link BackendLease#renew()} after {@link #renewHook}, with the lease's key. */
    public volatile Consumer<String> renewKeyHook = key -> {};
    /** Runs in {@link BackendLease#release()} before it answers: a test slows a release here. */
    public volatile Runnable releaseHook = () -> {};
    /** Runs in a cancel action before it unblocks its waiter: a test blocks the core's cancelling thread here. */
    public volatile Runnable cancelHook = () -> {};
    /**
     * Runs in {@link BackendLease#confirmedAtNanos()}, the first question the core asks of a fresh grant, with the
     * request that was granted.
     */
    public volatile Consumer<AcquireRequest> confirmedAtHook = request -> {};

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final Map<String, Grant> holders = new HashMap<>();
    private final Set<LockFeature> features;
    private final Duration leaseTime;
    private final Duration renewInterval;
    private int waiters;

    /**
     * When true, waits ignore interrupts, the interrupt status and the deadline, like a socket read without a
     * timeout: only the core's cancel action ({@link AcquireRequest#onCancel}) ends them.
     */
    public volatile boolean uninterruptible;
    /** When true, renewals report every lease lost. */
    public volatile boolean refuseRenewals;
    /** When true, acquires fail as if the store were unreachable. */
    public volatile boolean refuseAcquires;
    /** When true, renewals fail as if the store were unreachable. */
    public volatile boolean storeDown;
    /** Keys whose renewals fail as if their node were unreachable; the other keys' renewals go on. */
    public final Set<String> unreachableKeys = ConcurrentHashMap.newKeySet();
    /** When true, a renewal round renews every lease on a thread of its own, as a backend renews nodes in parallel. */
    public volatile boolean parallelRenewal;
    /** Added to every grant's {@code confirmedAtNanos()}: a positive shift is a backend that claims too late a time. */
    public volatile long confirmedAtShiftNanos;
    /** Keys whose grants report {@link BackendLease#isSuspended()}. */
    public final Set<String> suspendedKeys = ConcurrentHashMap.newKeySet();
    /** What {@link #sessionTimeout()} answers: positive makes this a store whose sessions expire when silent. */
    public volatile Duration sessionTimeout = Duration.ZERO;

    /** Locks that never expire; {@link #loseSession} reports their loss, hence LOSS_DETECTION. */
    public MemoryBackend() {
        this(
                EnumSet.of(LockFeature.REENTRANT, LockFeature.FENCING, LockFeature.LOSS_DETECTION),
                Duration.ZERO,
                Duration.ZERO);
    }

    /** A leased store whose leases the core renews: REENTRANT, LEASE_EXPIRY, AUTO_RENEWAL, LOSS_DETECTION. */
    public static MemoryBackend renewing(Duration leaseTime, Duration renewInterval) {
        return new MemoryBackend(
                EnumSet.of(
                        LockFeature.REENTRANT,
                        LockFeature.LEASE_EXPIRY,
                        LockFeature.AUTO_RENEWAL,
                        LockFeature.LOSS_DETECTION),
                leaseTime,
                renewInterval);
    }

    public MemoryBackend(Set<LockFeature> features, Duration leaseTime, Duration renewInterval) {
        this.features = features;
        this.leaseTime = leaseTime;
        this.renewInterval = renewInterval;
    }

    public final class Grant implements BackendLease {
        final String key;
        final String owner;
        final long token;
        final long confirmedAt;
        final AcquireRequest request;
        private final AtomicBoolean released = new AtomicBoolean();

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
            confirmedAtHook.accept(request);
            return confirmedAt + confirmedAtShiftNanos;
        }

        @Override
        public boolean isSuspended() {
            return suspendedKeys.contains(key);
        }

        @Override
        public boolean renew() {
            renewCalls.incrementAndGet();
            if (released.get()) {
                renewedAfterRelease.incrementAndGet();
            }
            renewHook.run();
            renewKeyHook.accept(key);
            if (storeDown || unreachableKeys.contains(key)) {
                throw new LockBackendException("memory store down");
            }
            return !refuseRenewals && isHolder();
        }

        @Override
        public boolean release() {
            releaseCalls.incrementAndGet();
            if (released.getAndSet(true)) {
                repeatedReleases.incrementAndGet();
            }
            releaseHook.run();
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
    public Duration sessionTimeout() {
        return sessionTimeout;
    }

    @Override
    public BackendLease acquire(AcquireRequest request) throws InterruptedException {
        acquireCalls.incrementAndGet();
        if (refuseAcquires) {
            throw new LockBackendException("memory store unreachable");
        }
        long sentAt = System.nanoTime();
        AtomicBoolean unblocked = new AtomicBoolean();
        if (uninterruptible) {
            request.onCancel(() -> {
                cancelHook.run();
                lock.lock();
                try {
                    unblocked.set(true);
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
                    if (uninterruptible) {
                        if (unblocked.get() || request.isTry()) {
                            return null;
                        }
                        // Like a socket read: ignores the interrupt and, unlike awaitUninterruptibly, does not
                        // clear it; only the core's cancel action ends the wait.
                        lock.unlock();
                        try {
                            LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(5));
                        } finally {
                            lock.lock();
                        }
                    } else {
                        long left = request.remainingNanos();
                        if (left <= 0) {
                            return null;
                        }
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

    @Override
    public void renew(List<BackendLease> leases, RenewalReport report) {
        if (!parallelRenewal) {
            LockBackend.super.renew(leases, report);
            return;
        }
        List<Thread> threads = new ArrayList<>();
        for (BackendLease lease : leases) {
            Thread t = new Thread(() -> LockBackend.super.renew(List.of(lease), report), "memory-renewal");
            t.setDaemon(true);
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Drops the key's state behind its holder's back and reports the loss, as a session-bound store would. */
    public void loseSession(String key) {
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

    /** Drops the key's state behind its holder's back without telling it, as a lease that expired in the store. */
    public void dropWithoutReport(String key) {
        lock.lock();
        try {
            holders.remove(key);
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Reports the key's lease lost but keeps its state in the store, as a backend does when its connection is
     * suspended: the lease can no longer be proved held, although the store may still hold it.
     */
    public void reportLostKeepingState(String key) {
        Grant g;
        lock.lock();
        try {
            g = holders.get(key);
        } finally {
            lock.unlock();
        }
        g.request.reportLost("connection suspended", null);
    }

    public int waiters() {
        lock.lock();
        try {
            return waiters;
        } finally {
            lock.unlock();
        }
    }

    public boolean isHeld(String key) {
        lock.lock();
        try {
            return holders.containsKey(key);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void close() {
        lock.lock();
        try {
            heldAtClose.addAll(holders.keySet());
        } finally {
            lock.unlock();
        }
        closeCalls.incrementAndGet();
    }
}
