package org.locksmith.lock.internal;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
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
import org.locksmith.lock.LockObserver;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.LockBackend;

/**
 * The shared core around one {@link LockBackend}: reentrancy without round trips, deadlines, interruption,
 * renewal, loss notification and close. The backend sees only first acquires and last releases.
 */
public final class CoreLockClient implements LockClient {
    static final System.Logger LOG = System.getLogger("org.locksmith.lock");
    /**
     * Why the calling thread's last acquire that returned null was not granted, as its backend said ({@link
     * org.locksmith.lock.spi.AcquireRequest#refusedBecause}), or null: set by every such return, read by the caller
     * that turns the null into a timeout ({@link #takeRefusal()}), on the same thread.
     */
    private static final ThreadLocal<String> REFUSAL = new ThreadLocal<>();

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** How long close() lets cancel actions end the waits before it interrupts the waiting threads. */
    private static final long CLOSE_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** Helper threads at most: cancel actions, and the releases of close(), run on up to this many at once. */
    private static final int HELPERS = 32;
    /** The client whose loss listeners the current thread runs, if it is a notifier thread. */
    private static final ThreadLocal<CoreLockClient> NOTIFYING = new ThreadLocal<>();

    /**
     * Who holds a key in this client: the thread, as with {@code ReentrantLock}, or for a detached lease an object of
     * its own, which no other acquire finds.
     */
    record Holder(String key, Object owner) {}

    private final LockBackend backend;
    private final String name;
    private final Signals signals;
    private final Set<LockFeature> features;
    private final boolean reentrant;
    private final boolean fencing;
    private final long leaseNanos;
    /** Whether the backend's locks are bound to a session that expires when silent (its sessionTimeout() > 0). */
    private final boolean sessionBound;

    private final String clientId;
    private final AtomicLong grants = new AtomicLong();
    private final ConcurrentHashMap<Holder, CoreLease> held = new ConcurrentHashMap<>();
    private final Set<CoreAcquireRequest> waiting = ConcurrentHashMap.newKeySet();
    /**
     * Timers only, never store I/O: one deadline timer per waiting request, which fires once (interrupts are heard
     * when they happen, see {@link InterruptHook}), and one expiry check per lease at its valid-until time, so that a
     * lease nothing renews still fires its listeners when it runs out. Idle while nothing is due.
     */
    private final ScheduledThreadPoolExecutor watchdog;
    /** Null when the backend has nothing to renew. */
    private final LeaseRenewer renewer;

    private final ThreadPoolExecutor notifier;
    /**
     * Cancel actions and the releases of close(), each apart from the others: one slow cancel action delays no other
     * waiter and no expiry check, and closing during an outage costs about one operation timeout, not one per lease.
     * Threads start when needed and end after a second idle.
     */
    private final ThreadPoolExecutor helpers;
    /**
     * The waits of async acquires, a thread each: a virtual thread where the runtime has them (Java 21+), else a
     * daemon platform thread. Created on the first async acquire.
     */
    private volatile ExecutorService asyncWaits;

    private final ReentrantLock closeLock = new ReentrantLock();
    private final Condition drained = closeLock.newCondition();
    private volatile boolean closed;
    /** The refusal reason logged last for a refused try, so that a polling caller does not repeat it. */
    private volatile String loggedRefusal;

    public CoreLockClient(LockBackend backend) {
        this.backend = backend;
        this.name = backend.name();
        this.signals = new Signals(name);
        Set<LockFeature> declared = backend.features();
        this.features = declared.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(declared));
        this.reentrant = features.contains(LockFeature.REENTRANT);
        this.fencing = features.contains(LockFeature.FENCING);
        Duration lease = backend.leaseTime();
        Duration renew = backend.renewInterval();
        Duration session = backend.sessionTimeout();
        List<String> problems = inconsistencies(features, lease, renew, session);
        if (!problems.isEmpty()) {
            IllegalArgumentException rejected = new IllegalArgumentException("Backend '" + name + "' ("
                    + backend.getClass().getName() + ") declares what the core cannot honour: "
                    + String.join("; ", problems));
            // The client owns the backend from here on, and there will be no client to close it.
            try {
                backend.close();
            } catch (RuntimeException e) {
                rejected.addSuppressed(e);
            }
            throw rejected;
        }
        this.leaseNanos = lease.toNanos();
        this.sessionBound = !session.isZero();
        byte[] id = new byte[12];
        RANDOM.nextBytes(id);
        this.clientId = Base64.getUrlEncoder().withoutPadding().encodeToString(id);

        // Threads start only when first needed: the watchdog, the renewer, the notifier, which runs listeners so
        // that a slow one never delays a renewal or a cancellation, and helpers for cancel actions and close().
        this.watchdog = new ScheduledThreadPoolExecutor(1, new DaemonThreads("watchdog"));
        watchdog.setRemoveOnCancelPolicy(true);
        watchdog.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        this.notifier = new ThreadPoolExecutor(
                0, 1, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), new DaemonThreads("notifier"));
        this.helpers = new ThreadPoolExecutor(
                HELPERS, HELPERS, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), new DaemonThreads("helper"));
        helpers.allowCoreThreadTimeOut(true);
        this.renewer = renew.isZero() ? null : new LeaseRenewer(this, backend, held.values(), renew.toNanos());
    }

    /**
     * What is wrong with a backend's lease and renewal declarations, each with what to do about it; empty if they
     * are consistent. Checked before any thread starts: a renewal slower than the lease, say, would otherwise show
     * up only as leases lost under load.
     */
    private static List<String> inconsistencies(
            Set<LockFeature> features, Duration lease, Duration renew, Duration session) {
        List<String> problems = new ArrayList<>();
        if (lease == null || lease.isNegative()) {
            problems.add("leaseTime() is " + (lease == null ? "null" : "negative (" + lease + ")")
                    + ": return the store's lease time, or Duration.ZERO if leases do not expire");
        }
        if (renew == null || renew.isNegative()) {
            problems.add("renewInterval() is " + (renew == null ? "null" : "negative (" + renew + ")")
                    + ": return how often to renew, or Duration.ZERO to never renew");
        }
        if (session == null || session.isNegative()) {
            problems.add("sessionTimeout() is " + (session == null ? "null" : "negative (" + session + ")")
                    + ": return how long the store keeps a silent session, or Duration.ZERO if locks are not bound"
                    + " to one");
        }
        if (!problems.isEmpty()) {
            return problems;
        }
        if (features.contains(LockFeature.LEASE_EXPIRY) && lease.isZero()) {
            problems.add("it declares LEASE_EXPIRY but its leaseTime() is zero, and the core judges a lease's"
                    + " validity by that time: return the store's lease time, or do not declare LEASE_EXPIRY");
        }
        if (features.contains(LockFeature.AUTO_RENEWAL) && renew.isZero()) {
            problems.add("it declares AUTO_RENEWAL but its renewInterval() is zero, so nothing would renew its"
                    + " leases: return a fraction of leaseTime() (a third leaves room for two failed attempts),"
                    + " or do not declare AUTO_RENEWAL");
        }
        if (!lease.isZero() && !renew.isZero() && renew.compareTo(lease) >= 0) {
            problems.add("its renewInterval() (" + renew.toMillis() + " ms) is not shorter than its leaseTime() ("
                    + lease.toMillis() + " ms), so leases run out before they are renewed: renew at a fraction"
                    + " of the lease time (a third leaves room for two failed attempts)");
        }
        if (!session.isZero() && renew.isZero()) {
            problems.add("its sessionTimeout() (" + session.toMillis() + " ms) is positive but its renewInterval() is"
                    + " zero, so nothing would prove its sessions alive and every lease would turn invalid after"
                    + " one session timeout: return a fraction of sessionTimeout() (a third) as renewInterval()");
        } else if (!session.isZero() && renew.compareTo(session) >= 0) {
            problems.add("its renewInterval() (" + renew.toMillis() + " ms) is not shorter than its sessionTimeout() ("
                    + session.toMillis() + " ms), so leases turn invalid before their session is proved alive:"
                    + " check sessions at a fraction of the session timeout (a third)");
        }
        return problems;
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

    @Override
    public void addObserver(LockObserver observer) {
        signals.add(observer);
    }

    @Override
    public void removeObserver(LockObserver observer) {
        signals.remove(observer);
    }

    /** Where the client's lock events go (flight recorder, observers). */
    Signals signals() {
        return signals;
    }

    /** The renewer, or null if the backend does not renew; for tests that play a renewal round step by step. */
    LeaseRenewer renewer() {
        return renewer;
    }

    void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("LockClient (" + name + ") is closed");
        }
    }

    /** Whether leases turn invalid by time alone: leased, or bound to a session that expires when silent. */
    boolean validityIsBounded() {
        return leaseNanos != 0 || sessionBound;
    }

    /**
     * How long a confirmation proves a lease held: the lease time, else the session timeout, the shorter of both
     * when a backend has both; 0 if neither bounds it. The session timeout is asked each time: a store may
     * negotiate it per session.
     */
    long trustNanos() {
        long session = sessionBound ? backend.sessionTimeout().toNanos() : 0;
        if (leaseNanos == 0) {
            return session;
        }
        return session == 0 ? leaseNanos : Math.min(leaseNanos, session);
    }

    /**
     * The drift margin taken off every bound: 1% of it plus 2 ms. The store measures the lease or session on its
     * own clock, whose rate may differ from ours, and may act on its own tick (Redis's expiry cycle, ZooKeeper's
     * session buckets); the same rule Redlock uses for its clock drift.
     */
    static long driftMarginNanos(long trustNanos) {
        return trustNanos / 100 + TimeUnit.MILLISECONDS.toNanos(2);
    }

    /** The last instant a lease confirmed by a round trip sent at {@code confirmedAtNanos} can be trusted. */
    long validUntil(long confirmedAtNanos) {
        long trust = trustNanos();
        if (trust == 0) {
            return confirmedAtNanos + Long.MAX_VALUE / 2;
        }
        return confirmedAtNanos + trust - driftMarginNanos(trust);
    }

    /** The lease or session time that confirmations prove, for messages. */
    Duration trustTime() {
        return Duration.ofNanos(trustNanos());
    }

    CoreLease heldByCurrentThread(String key) {
        return held.get(new Holder(key, Thread.currentThread()));
    }

    /**
     * Acquires what {@code acquisition} asks for: {@code null} when not granted by its deadline, or at its single
     * attempt.
     */
    CoreLease acquire(Acquisition acquisition) throws InterruptedException {
        String key = acquisition.key();
        boolean isTry = acquisition.isAttempt();
        boolean interruptible = acquisition.interruptible();
        boolean detached = acquisition.isDetached();
        ensureOpen();
        if (interruptible && Thread.interrupted()) {
            throw new InterruptedException("Interrupted before acquiring key '" + key + "'");
        }
        long startNanos = signals.acquireStart();
        Thread thread = Thread.currentThread();
        if (!detached) {
            CoreLease existing = held.get(new Holder(key, thread));
            if (existing != null) {
                if (!reentrant) {
                    throw new IllegalStateException("Thread '" + thread.getName() + "' already holds key '" + key
                            + "', and backend '" + name + "' is not REENTRANT");
                }
                return existing.reenter();
            }
        }
        CoreAcquireRequest request = new CoreAcquireRequest(
                key,
                clientId + ":" + grants.incrementAndGet(),
                acquisition.deadlineNanos(),
                isTry,
                interruptible,
                thread,
                watchdog,
                helpers);
        waiting.add(request);
        CoreLease lease = null;
        try {
            AsyncAcquire async = acquisition.observer();
            if (async != null) {
                async.started(request);
            }
            if (closed) {
                throw closedWhileWaiting(key);
            }
            BackendLease granted;
            try {
                granted = backend.acquire(request);
            } catch (LockBackendException e) {
                signals.backendError(key, "acquire", e);
                throw e;
            }
            if (granted != null) {
                // A backend cannot have confirmed a grant after its acquire returned; a later claim is clamped so
                // that it never stretches validity.
                long returnedAt = System.nanoTime();
                long confirmedAt = granted.confirmedAtNanos();
                lease = new CoreLease(
                        this,
                        key,
                        detached ? null : thread,
                        granted,
                        confirmedAt - returnedAt > 0 ? returnedAt : confirmedAt,
                        returnedAt);
                // Registered before the attempt leaves `waiting`: close() waits for `waiting` to drain and then
                // releases all of `held`, so a grant that lands while the client closes is released before the
                // backend closes, never after.
                held.put(lease.holder(), lease);
            }
        } catch (InterruptedException e) {
            if (closed) {
                throw closedWhileWaiting(key);
            }
            throw e;
        } finally {
            request.finish();
            if (request.interruptedByClose()) {
                Thread.interrupted(); // close()'s own interrupt, which ended the wait; the caller gets its exception
            }
            leaveWaiting(request);
        }
        if (lease == null) {
            if (closed) {
                throw closedWhileWaiting(key);
            }
            if (!isTry && interruptible && Thread.interrupted()) {
                throw new InterruptedException("Interrupted while waiting for key '" + key + "'");
            }
            String refusal = request.refusal();
            if (refusal == null) {
                REFUSAL.remove();
            } else {
                REFUSAL.set(refusal);
            }
            if (isTry && refusal != null && !refusal.equals(loggedRefusal)) {
                loggedRefusal = refusal;
                LOG.log(
                        System.Logger.Level.INFO,
                        "Key '" + key + "' was not granted (backend " + name + "): " + refusal
                                + " (logged once per reason)");
            }
            if (!isTry) {
                signals.timedOut(key, startNanos);
            }
            return null;
        }
        request.attach(lease);
        if (renewer == null) {
            // Nothing will confirm it again: a timer reports it lost when its time runs out. With a renewer, the
            // renewer schedules that timer only once renewals fail to confirm it (LeaseRenewer.leasesDue), so an
            // uncontended acquire + release neither schedules nor cancels a timer and never wakes the watchdog.
            watchExpiry(lease);
        }
        if (closed) {
            // close() releases it too; whichever comes second finds it released.
            lease.releaseOnClose();
            throw closedWhileWaiting(key);
        }
        if (!isTry && interruptible && Thread.interrupted()) {
            // Granted in the same instant as the interrupt: honour the interrupt, leave nothing held.
            lease.releaseOnClose();
            throw new InterruptedException("Interrupted while acquiring key '" + key + "'");
        }
        signals.acquired(key, startNanos, lease.backendLease(), fencing);
        return lease;
    }

    /**
     * Why the calling thread's last acquire that returned null was not granted, as the backend said, or null; cleared
     * by this call.
     */
    static String takeRefusal() {
        String refusal = REFUSAL.get();
        REFUSAL.remove();
        return refusal;
    }

    /** Starts an async acquire's wait; a client closed meanwhile fails its future. */
    void startAsync(AsyncAcquire async) {
        try {
            asyncWaits().execute(async);
        } catch (RejectedExecutionException e) {
            async.completeExceptionally(new IllegalStateException("LockClient (" + name + ") is closed", e));
        }
    }

    private ExecutorService asyncWaits() {
        ExecutorService waits = asyncWaits;
        if (waits == null) {
            closeLock.lock();
            try {
                if (closed) {
                    throw new RejectedExecutionException("closed");
                }
                waits = asyncWaits;
                if (waits == null) {
                    waits = newAsyncWaits();
                    asyncWaits = waits;
                }
            } finally {
                closeLock.unlock();
            }
        }
        return waits;
    }

    /** A virtual thread per task on Java 21 and later (looked up, as this library builds for Java 17), else a daemon. */
    private static ExecutorService newAsyncWaits() {
        try {
            Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
            Class<?> builderType = Class.forName("java.lang.Thread$Builder");
            builder = builderType.getMethod("name", String.class, long.class).invoke(builder, "locksmith-async-", 1L);
            ThreadFactory factory =
                    (ThreadFactory) builderType.getMethod("factory").invoke(builder);
            return (ExecutorService) Executors.class
                    .getMethod("newThreadPerTaskExecutor", ThreadFactory.class)
                    .invoke(null, factory);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return new ThreadPoolExecutor(
                    0, Integer.MAX_VALUE, 10, TimeUnit.SECONDS, new SynchronousQueue<>(), new DaemonThreads("async"));
        }
    }

    /** Whether close() has begun. */
    boolean isClosed() {
        return closed;
    }

    IllegalStateException closedWhileWaiting(String key) {
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

    /** Has the watchdog look at {@code lease} when its time runs out; nothing if leases do not expire. */
    void watchExpiry(CoreLease lease) {
        if (!validityIsBounded()) {
            return;
        }
        long delay = Math.max(0, lease.validUntilNanos() - System.nanoTime());
        try {
            lease.expiryCheck(watchdog.schedule(lease::checkExpiry, delay, TimeUnit.NANOSECONDS));
        } catch (RejectedExecutionException e) {
            // Closed: close() releases the lease, and nobody listens for its expiry any more.
        }
    }

    void forget(CoreLease lease) {
        held.remove(lease.holder(), lease);
    }

    /**
     * Has a helper thread release a lost lease in the store, on a store whose locks live as long as their session
     * and have no lease time of their own: a lease lost because its session checks failed (the core's bound ran
     * out) may well have a live session, and the store would then keep the lock, blocking every other client, until
     * the owner releases. A leased store frees a lost lease by itself when its lease runs out; the core leaves that
     * to the store, so that the TCK sees a store that never expires leases. Nothing while closing: close() releases
     * what is left.
     */
    void releaseLost(CoreLease lease) {
        if (closed || leaseNanos != 0 || !sessionBound) {
            return;
        }
        try {
            helpers.execute(() -> {
                if (!closed) {
                    lease.releaseLostInStore();
                }
            });
        } catch (RejectedExecutionException e) {
            // closing: close() releases it
        }
    }

    void notifyLost(CoreLease lease, LockLostException cause) {
        try {
            notifier.execute(() -> {
                NOTIFYING.set(this);
                try {
                    lease.fireListeners(cause);
                } finally {
                    NOTIFYING.remove();
                }
            });
        } catch (RejectedExecutionException e) {
            lease.fireListeners(cause); // closing: fire on this thread rather than never
        }
    }

    /**
     * Stops renewing: no renewal round starts after this returns, and none is in flight. The held leases stay held
     * and keep their validity clock, so they run out (reported lost at their valid-until time) while every other
     * call, releases included, still reaches the store, as in a process whose renewer thread stalled. For test kits
     * ({@link org.locksmith.lock.spi.Abandonment#stopRenewals}).
     */
    public void stopRenewals() {
        if (renewer == null) {
            return;
        }
        renewer.shutdownNow();
        try {
            if (!renewer.awaitTermination(CLOSE_WAIT_NANOS, TimeUnit.NANOSECONDS)) {
                throw new IllegalStateException("the renewal round of '" + name + "' did not end in 10 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while stopping the renewals of '" + name + "'", e);
        }
        for (CoreLease lease : held.values()) {
            if (!lease.expiryWatched()) {
                watchExpiry(lease);
            }
        }
    }

    /**
     * Ends this client as a crash of its process would: renewals stop, waiters fail, and the backend is closed
     * without releasing any lease, so the store frees them by itself (lease expiry, session end). The leases keep
     * their validity clock; the client is closed. For test kits ({@link
     * org.locksmith.lock.spi.Abandonment#abandon}).
     */
    public void abandon() {
        stopRenewals();
        close(false);
    }

    @Override
    public void close() {
        close(true);
    }

    private void close(boolean releaseLeases) {
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
            // A deadline, not awaitNanos's return value: that is what is left of one 50 ms slice, which made this
            // wait give up after the first slice instead of CLOSE_WAIT_NANOS.
            long start = System.nanoTime();
            long deadline = start + CLOSE_WAIT_NANOS;
            boolean interrupted = false;
            long left;
            while (!waiting.isEmpty() && (left = deadline - System.nanoTime()) > 0) {
                drained.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(20)));
                for (CoreAcquireRequest request : waiting) {
                    request.cancel();
                }
                if (!interrupted && System.nanoTime() - start > CLOSE_GRACE_NANOS) {
                    // A wait that watches no cancel action (a Condition with a long timeout) ends by interrupt.
                    interrupted = true;
                    for (CoreAcquireRequest request : waiting) {
                        request.interruptForClose();
                    }
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
        if (releaseLeases) {
            releaseAllOnClose();
        } else {
            held.clear(); // abandoned: the store frees them by itself
        }
        ExecutorService waits = asyncWaits;
        if (waits != null) {
            waits.shutdown(); // every wait ended above: its future failed or got its lease, which close() released
        }
        if (renewer != null) {
            renewer.shutdownNow();
        }
        watchdog.shutdownNow();
        notifier.shutdown();
        helpers.shutdown();
        try {
            if (renewer != null) {
                renewer.awaitTermination(5, TimeUnit.SECONDS);
            }
            watchdog.awaitTermination(5, TimeUnit.SECONDS);
            // A listener may close its own client: then its thread is the notifier's, which ends after it.
            if (NOTIFYING.get() != this) {
                notifier.awaitTermination(5, TimeUnit.SECONDS);
            }
            helpers.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            backend.close();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "Closing backend '" + name + "' failed", e);
        }
    }

    /** Releases every held lease, on helper threads at once, so that a slow store costs about one release. */
    private void releaseAllOnClose() {
        List<CoreLease> leases = new ArrayList<>(held.values());
        if (leases.size() == 1) {
            leases.get(0).releaseOnClose();
            return;
        }
        CountDownLatch done = new CountDownLatch(leases.size());
        for (CoreLease lease : leases) {
            Runnable release = () -> {
                try {
                    lease.releaseOnClose();
                } finally {
                    done.countDown();
                }
            };
            try {
                helpers.execute(release);
            } catch (RejectedExecutionException e) {
                release.run();
            }
        }
        boolean interrupted = false;
        while (true) {
            try {
                done.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true; // every lease must be released before the backend closes
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "LockClient[" + name + ", id=" + clientId + (closed ? ", closed" : "") + "]";
    }
}
