package org.locksmith.lock.internal;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.locksmith.lock.DistributedLock;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.LockBackend;

/**
 * The shared core around one {@link LockBackend}: reentrancy without round trips, deadlines, interruption,
 * renewal, loss notification and close. The backend sees only first acquires and last releases.
 */
public final class CoreLockClient implements LockClient {
    static final System.Logger LOG = System.getLogger("org.locksmith.lock");
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);

    /** Who holds a key in this client: the thread, as with {@code ReentrantLock}. */
    record Holder(String key, Thread thread) {}

    private final LockBackend backend;
    private final String name;
    private final Set<LockFeature> features;
    private final boolean reentrant;
    private final long leaseNanos;
    private final String clientId;
    private final AtomicLong grants = new AtomicLong();
    private final ConcurrentHashMap<Holder, CoreLease> held = new ConcurrentHashMap<>();
    private final Set<CoreAcquireRequest> waiting = ConcurrentHashMap.newKeySet();
    private final ScheduledThreadPoolExecutor scheduler;
    private final ThreadPoolExecutor notifier;

    private final ReentrantLock closeLock = new ReentrantLock();
    private final Condition drained = closeLock.newCondition();
    private volatile boolean closed;

    public CoreLockClient(LockBackend backend) {
        this.backend = backend;
        this.name = backend.name();
        Set<LockFeature> declared = backend.features();
        this.features = declared.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(declared));
        this.reentrant = features.contains(LockFeature.REENTRANT);
        Duration lease = backend.leaseTime();
        this.leaseNanos = lease == null || lease.isZero() || lease.isNegative() ? 0 : lease.toNanos();
        byte[] id = new byte[12];
        RANDOM.nextBytes(id);
        this.clientId = Base64.getUrlEncoder().withoutPadding().encodeToString(id);

        this.scheduler = new ScheduledThreadPoolExecutor(1, new DaemonThreads("renewer"));
        scheduler.setRemoveOnCancelPolicy(true);
        scheduler.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        // Listeners get their own thread so that a slow one never delays a renewal.
        this.notifier = new ThreadPoolExecutor(
                0, 1, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), new DaemonThreads("notifier"));
        Duration renew = backend.renewInterval();
        if (renew != null && !renew.isZero() && !renew.isNegative()) {
            long every = renew.toNanos();
            scheduler.scheduleWithFixedDelay(this::renewAll, every, every, TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public DistributedLock lock(String key) {
        Keys.validate(key);
        ensureOpen();
        return new CoreDistributedLock(this, key);
    }

    @Override
    public Set<LockFeature> features() {
        return features;
    }

    @Override
    public String backend() {
        return name;
    }

    /** The backend this client wraps; for tests and tools that need the store's own view. */
    public LockBackend backendImplementation() {
        return backend;
    }

    void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("LockClient (" + name + ") is closed");
        }
    }

    Duration leaseTime() {
        return Duration.ofNanos(leaseNanos);
    }

    long validUntil(long confirmedAtNanos) {
        return leaseNanos == 0 ? confirmedAtNanos + Long.MAX_VALUE / 2 : confirmedAtNanos + leaseNanos;
    }

    CoreLease heldByCurrentThread(String key) {
        return held.get(new Holder(key, Thread.currentThread()));
    }

    /**
     * Acquires {@code key} for the current thread until {@code deadlineNanos}; null on timeout.
     *
     * @param isTry one attempt, no waiting, and (like {@code Lock.tryLock()}) no interruption check
     */
    CoreLease acquire(String key, long deadlineNanos, boolean isTry) throws InterruptedException {
        ensureOpen();
        Thread thread = Thread.currentThread();
        CoreLease existing = held.get(new Holder(key, thread));
        if (existing != null) {
            if (!reentrant) {
                throw new IllegalStateException("Thread '" + thread.getName() + "' already holds key '" + key
                        + "', and backend '" + name + "' is not REENTRANT");
            }
            return existing.reenter();
        }
        if (!isTry && Thread.interrupted()) {
            throw new InterruptedException("Interrupted before acquiring key '" + key + "'");
        }
        CoreAcquireRequest request = new CoreAcquireRequest(
                key, clientId + ":" + grants.incrementAndGet(), deadlineNanos, isTry, thread, scheduler);
        waiting.add(request);
        BackendLease granted;
        try {
            if (closed) {
                throw closedWhileWaiting(key);
            }
            granted = backend.acquire(request);
        } catch (InterruptedException e) {
            if (closed) {
                throw closedWhileWaiting(key);
            }
            throw e;
        } finally {
            request.finish();
            leaveWaiting(request);
        }
        if (granted == null) {
            if (closed) {
                throw closedWhileWaiting(key);
            }
            if (!isTry && Thread.interrupted()) {
                throw new InterruptedException("Interrupted while waiting for key '" + key + "'");
            }
            return null;
        }
        CoreLease lease = new CoreLease(this, key, thread, granted);
        held.put(lease.holder(), lease);
        request.attach(lease);
        if (!isTry && Thread.interrupted()) {
            // Granted in the same instant as the interrupt: honour the interrupt, leave nothing held.
            lease.releaseOnClose();
            throw new InterruptedException("Interrupted while acquiring key '" + key + "'");
        }
        if (closed) {
            lease.releaseOnClose();
            throw closedWhileWaiting(key);
        }
        return lease;
    }

    private IllegalStateException closedWhileWaiting(String key) {
        return new IllegalStateException("LockClient (" + name + ") was closed while acquiring key '" + key + "'");
    }

    private void leaveWaiting(CoreAcquireRequest request) {
        waiting.remove(request);
        if (closed) {
            closeLock.lock();
            try {
                drained.signalAll();
            } finally {
                closeLock.unlock();
            }
        }
    }

    void forget(CoreLease lease) {
        held.remove(lease.holder(), lease);
    }

    void notifyLost(CoreLease lease, LockLostException cause) {
        try {
            notifier.execute(() -> lease.fireListeners(cause));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            lease.fireListeners(cause); // closing: fire on this thread rather than never
        }
    }

    /** One renewal round: expire what could not be renewed in time, then renew the rest in one backend call. */
    private void renewAll() {
        renew(leasesDueForRenewal());
    }

    /** The held leases, after marking lost those whose time ran out. Their owners may release them meanwhile. */
    List<CoreLease> leasesDueForRenewal() {
        List<CoreLease> due = new ArrayList<>();
        long now = System.nanoTime();
        for (CoreLease lease : held.values()) {
            if (!lease.isHeld()) {
                continue;
            }
            if (leaseNanos != 0 && now - lease.validUntilNanos() >= 0) {
                lease.markLost(lease.ranOut());
                continue;
            }
            due.add(lease);
        }
        return due;
    }

    /** Renews {@code due} in one backend call, but only those still held once their I/O lock is ours. */
    void renew(List<CoreLease> due) {
        List<CoreLease> leases = new ArrayList<>(due.size());
        List<BackendLease> batch = new ArrayList<>(due.size());
        for (CoreLease lease : due) {
            // Skip a lease whose owner is releasing it right now; the SPI promises one call at a time.
            if (!lease.io.tryLock()) {
                continue;
            }
            // Released or lost since it was chosen? A release ends the lease under this lock, so a lease held now
            // stays unreleased until the renewal is done. The SPI renews held leases only: a released one's
            // connection may already be back in a pool.
            if (!lease.isHeld()) {
                lease.io.unlock();
                continue;
            }
            leases.add(lease);
            batch.add(lease.backendLease());
        }
        if (batch.isEmpty()) {
            return;
        }
        long sentAt = System.nanoTime();
        try {
            List<BackendLease> lost = backend.renew(batch);
            Set<BackendLease> lostSet = lost.isEmpty() ? Set.of() : Set.copyOf(lost);
            for (CoreLease lease : leases) {
                if (lostSet.contains(lease.backendLease())) {
                    lease.markLost(new LockLostException(
                            "Lease of key '" + lease.key() + "' is no longer held in the store (renewal refused)"));
                } else {
                    lease.renewed(sentAt);
                }
            }
        } catch (LockBackendException e) {
            LOG.log(System.Logger.Level.WARNING, "Renewal failed; will retry: " + e.getMessage());
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "Renewal failed unexpectedly; will retry", e);
        } finally {
            for (CoreLease lease : leases) {
                lease.io.unlock();
            }
        }
    }

    @Override
    public void close() {
        closeLock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
        } finally {
            closeLock.unlock();
        }
        for (CoreAcquireRequest request : waiting) {
            request.cancel();
        }
        closeLock.lock();
        try {
            long left = CLOSE_WAIT_NANOS;
            while (!waiting.isEmpty() && left > 0) {
                left = drained.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
                for (CoreAcquireRequest request : waiting) {
                    request.cancel();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            closeLock.unlock();
        }
        if (!waiting.isEmpty()) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    waiting.size() + " acquire(s) still in backend '" + name
                            + "' after close; the backend did not honour cancellation");
        }
        for (CoreLease lease : new ArrayList<>(held.values())) {
            lease.releaseOnClose();
        }
        scheduler.shutdownNow();
        notifier.shutdown();
        try {
            scheduler.awaitTermination(5, TimeUnit.SECONDS);
            notifier.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            backend.close();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "Closing backend '" + name + "' failed", e);
        }
    }

    @Override
    public String toString() {
        return "LockClient[" + name + ", id=" + clientId + (closed ? ", closed" : "") + "]";
    }
}
