package org.locksmith.lock.tck.reference;

import java.time.Duration;
import java.util.EnumSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.LockBackend;
import org.locksmith.lock.spi.RenewalReport;
import org.locksmith.lock.tck.TckTimings;

/**
 * The in-memory reference backend: a correct implementation of the SPI over a {@link MemoryStore} shared by its
 * clients. FIFO queue (FAIR), waiters woken by a condition (BLOCKING_WAKEUP), leases that expire unless renewed,
 * sessions that can be killed, and fencing counters that survive crash restarts and, through a clock floor, empty
 * ones. Each {@link Defect} breaks it in
 * exactly one way, to prove that the TCK notices.
 */
final class MemoryLockBackend implements LockBackend {

    /** One deliberate bug each. */
    enum Defect {
        RELEASE_WITHOUT_OWNER_CHECK,
        TOKEN_RESETS_AFTER_CRASH,
        /**
         * Fencing counters with no floor: a store restarted empty counts again from 1, below the tokens it gave
         * before.
         */
        TOKENS_RESET_ON_EMPTY_RESTART,
        TIMED_ACQUIRE_RETURNS_EARLY,
        TIMED_ACQUIRE_OVERSHOOTS,
        NEVER_EXPIRES,
        POLL_WAKEUP_150MS,
        /**
         * Declares BLOCKING_WAKEUP but polls every 30 ms: hand-offs stay within the latency bounds, so only the number
         * of requests an idle waiter makes shows it.
         */
        POLL_WAKEUP_30MS,
        /**
         * Wakes timed waits but polls every 30 ms when a wait has no deadline ({@code acquire()}, {@code
         * asLock().lock()}): a wait-time conversion that overflows does this.
         */
        POLL_WAKEUP_WITHOUT_DEADLINE,
        LEAKS_WAITER_ON_INTERRUPT,
        /**
         * A release from a thread other than the acquiring one reports success and frees nothing, as a release through
         * a thread-bound connection would.
         */
        RELEASE_ON_ACQUIRING_THREAD_ONLY,
        /** A wait ignores the core's cancellation (cancel actions and {@code isCancelled()}) and ends at its deadline. */
        IGNORES_CANCEL,
        /** A release during an outage waits for the store to come back instead of failing within its timeout. */
        RELEASE_WAITS_OUT_OUTAGE,
        /** Once this client saw the store down, its releases no longer wake waiters (a lost subscription). */
        WAKEUPS_LOST_AFTER_OUTAGE,
        /** An interrupted {@code asLock().lock()} leaves the queue and queues again, at the back. */
        REQUEUES_ON_INTERRUPT,
        /** An interrupted {@code asLock().lock()} waits on in place but does not set the interrupt status again. */
        SWALLOWS_INTERRUPT,
        UNFAIR_ORDER,
        CASE_INSENSITIVE_KEYS,
        RENEW_IGNORES_LOSS,
        /** Grants as soon as a restarted store serves, while a holder of a forgotten lock still believes it holds. */
        GRANTS_RIGHT_AFTER_RESTART,
        /** Starts a "connection pool housekeeper" thread per client, as pool libraries do, and never stops it. */
        LEAKS_HOUSEKEEPER_THREAD,
        /** close() forgets to close its "connection" to the store. */
        LEAKS_CONNECTION,
        /** renew() swallows the store's failure and reports every lease renewed, as if it had reached the store. */
        RENEW_SWALLOWS_OUTAGE,
        /**
         * The store expires leases, but the backend tells the core a lease twenty times longer than the store keeps
         * (as a backend that misreads its store's TTL unit would) and never reports an expired grant lost.
         */
        EXPIRES_SILENTLY,
        /** tryAcquire() of a held key waits up to 40 ms for the holder before it gives up (a "short grace"). */
        TRY_WAITS_40MS,
        /**
         * Every fourth wait misses its wake-up (as a subscription set up after the release, or a notification
         * dropped on a reconnect, would) and the waiter finds the key free only at its fallback re-check 500 ms on.
         */
        LOSES_WAKEUPS,
        /** Stores keys cut at 255 characters, as a VARCHAR(255) column in a non-strict SQL mode would. */
        KEYS_TRUNCATED_AT_255,
        /**
         * Checks a release against the client, not the lease (an owner id per client, as "host:pid" would be): a
         * lost lease's late release frees the key that another thread of the same client holds now.
         */
        OWNER_PER_CLIENT,
        /**
         * Every store call by a thread whose interrupt status is set fails, as a virtual thread's socket I/O or a
         * connection pool's borrow does: a try or a release by an interrupted thread does not reach the store.
         */
        CALLS_FAIL_WHEN_INTERRUPTED,
        /**
         * Re-entry implemented in the store, keyed by an owner id per client (as a hash of owner to hold count with
         * "host:pid" as the owner would): an acquire by any thread of the holding client is granted as a re-entry.
         */
        REENTERS_PER_CLIENT,
        /**
         * Re-entry implemented in the store, keyed by a JVM-wide id plus the thread (as "uuid:threadId" with one uuid
         * per JVM would): an acquire by the holding thread is granted as a re-entry, whichever client or lease it is
         * for, so two clients used from one thread (of a pool, say) both hold the key.
         */
        REENTERS_PER_THREAD,
        /**
         * A timed wait converts what is left of it to whole seconds and passes that to a store call that takes
         * milliseconds (a 10 s wait becomes 10 ms), and gives up when that call times out.
         */
        WAIT_TIMEOUT_IN_WRONG_UNIT,
        /**
         * On a killed session the backend reconnects and re-creates its locks under the new session (as a client
         * that restores its ephemeral nodes after a session expiry would): a dead session's locks never free.
         */
        KILLED_SESSION_LOCKS_RESTORED,
        /**
         * Waits in one blocking store call of up to {@link #UNCANCELLABLE_CALL} that ignores interrupts (a socket
         * read), with no cancel action registered: a cancellation (close, interrupt, deadline) is noticed only when
         * that call returns.
         */
        UNCANCELLABLE_STORE_WAIT,
        /**
         * Releases are written behind: release() queues the delete and reports success, a flusher sends the queue
         * 100 ms later, and close() stops the flusher without sending what is queued.
         */
        RELEASES_WRITE_BEHIND,
        /**
         * The store's key column holds only characters of the Basic Multilingual Plane (as MySQL's 3-byte {@code
         * utf8} does): a key with an emoji or another supplementary character fails with a store error.
         */
        KEYS_WITHOUT_SUPPLEMENTARY_CHARACTERS,
        /**
         * A waiter that gives up (deadline, interrupt, cancel) marks its queue record abandoned instead of deleting
         * it; the queue skips abandoned records, so locking works, but the store keeps one record per waiter
         * forever.
         */
        KEEPS_ABANDONED_WAITER_RECORDS,
        /**
         * A wait that reaches its deadline returns without removing its queue entry (as a sequential queue node not
         * deleted on timeout): the ghost at the head of the queue keeps every later acquire of the key out.
         */
        LEAKS_WAITER_ON_TIMEOUT,
        /**
         * Every second release of the store notifies no waiter (as a notification channel that drops a share of
         * its messages would); a waiter that missed one finds the key free at its fallback re-check, 500 ms on. Each
         * round of a hand-off test with a fixed number of releases lines the dropped ones up with releases nobody
         * waits for.
         */
        DROPS_ALTERNATE_RELEASE_NOTIFICATIONS,
        /**
         * Keeps a key's wait queue in the same name space as the locks, under the key's name plus {@code ":w"}:
         * while {@code k} has waiters, a lock named {@code k:w} is taken.
         */
        QUEUE_UNDER_DERIVED_NAME,
        /**
         * Starts a wake-up listener thread per wait and stops it when the wait ends by a grant, its deadline or an
         * interrupt, not when it is cancelled (by close or by a cancelled future): closing a client with a waiter
         * leaks a thread.
         */
        LEAKS_LISTENER_OF_CANCELLED_WAITER,
        /**
         * Hands a released key over in the store to the first waiter; a waiter that gives up (deadline, cancel,
         * interrupt) deletes its queue entry in a store call of its own, 2 ms long, without looking whether the key
         * was handed to it meanwhile: the key stays granted to nobody until that grant's lease runs out.
         */
        ORPHANS_RACED_HANDOFF,
        /**
         * Declares FAIR, but the queue keeps eight places; later waiters wait on a stack beside it and take the
         * places as they free, newest first.
         */
        QUEUE_OF_EIGHT,
        /**
         * Draws the fencing token in a store call of its own (2 ms, every other request) when the request starts, not when the key is
         * granted: a request that draws its token first may be granted after one that drew a later token.
         */
        TOKEN_STAMPED_AT_REQUEST,
        // ---- lease ends: abandoned holders, stale releases, renewals racing releases ----
        /** The store keeps an unrenewed lease 30% longer than the backend declares (a TTL padded "to be safe"). */
        STORE_KEEPS_LEASES_LONGER,
        /**
         * The store keeps a lease a quarter shorter than the backend declares and drops it without telling its
         * holder (as stores with a TTL do), so the core trusts a lease the store has already dropped; renewals every
         * third of the lease hide it while the holder lives.
         */
        STORE_KEEPS_LEASES_SHORTER,
        /**
         * A waiter is woken by releases only, never by the holder's lease running out: it finds an expired key free
         * only at its own deadline.
         */
        WAITER_BLIND_TO_EXPIRY,
        /**
         * A release whose own lease has run out in the store frees the key without the owner check (as one that
         * takes "my lease expired" for "the key is stale, clean it up" would).
         */
        RELEASE_UNCHECKED_ONCE_EXPIRED,
        /**
         * Renewals are fire-and-forget: reported renewed at once, written to the store 30 ms later as an upsert of
         * the owner with a fresh expiry, which re-creates a key released meanwhile (or takes it from its new holder).
         */
        RENEWAL_WRITTEN_LATE,
        /**
         * After a renewal of this client failed (store unreachable), its releases skip the owner check ("force" the
         * release of a lease whose state is unknown).
         */
        RELEASE_UNCHECKED_AFTER_FAILED_RENEWAL,
        /**
         * close() leaves the locks of its session in the store (as a pooled connection handed back with its session
         * locks still taken would): a SESSION_BOUND client abandoned without releasing never frees its keys.
         */
        CLOSE_KEEPS_SESSION_LOCKS,
        /**
         * Renews its leases one after another in the order they were granted, each call waiting for its answer (as a
         * loop over per-lease sessions does): a stalled lease holds up the renewal of every lease after it until its
         * call times out.
         */
        RENEWS_ONE_AFTER_ANOTHER
    }

    /** How long a renewal of a stalled lease waits for an answer before it fails: the kit's operation timeout. */
    private static final Duration STALLED_CALL = TckTimings.defaults().operationTimeout();

    private static final AtomicLong GRANTS = new AtomicLong();

    /** Counts the token draws of {@link Defect#TOKEN_STAMPED_AT_REQUEST}. */
    private static final AtomicLong REQUEST_DRAWS = new AtomicLong();
    /** Writes the {@link Defect#RENEWAL_WRITTEN_LATE} renewals. */
    private static final ScheduledExecutorService LATE_RENEWALS = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "memory-late-renewals");
        t.setDaemon(true);
        return t;
    });

    /** Set once a renewal of this client failed; used by {@link Defect#RELEASE_UNCHECKED_AFTER_FAILED_RENEWAL}. */
    private volatile boolean renewalFailed;

    /** A waiter's queue entry under {@link Defect#ORPHANS_RACED_HANDOFF}: the store hands the key to it. */
    private final class Pending {
        final AcquireRequest request;
        Grant assigned; // guarded by the store lock

        Pending(AcquireRequest request) {
            this.request = request;
        }

        MemoryLockBackend owner() {
            return MemoryLockBackend.this;
        }
    }

    /**
     * How long one {@link Defect#UNCANCELLABLE_STORE_WAIT} call blocks: two seconds more than the kit allows a close
     * (its two-second operation timeout, stretched by the time factor), so the defect shows at any factor.
     */
    private static final Duration UNCANCELLABLE_CALL =
            TckTimings.allow(Duration.ofSeconds(2)).plusSeconds(2);

    /** Waits counted by {@link Defect#LOSES_WAKEUPS}. */
    private static final java.util.concurrent.atomic.AtomicLong WAITS = new java.util.concurrent.atomic.AtomicLong();

    /** Housekeepers leaked by {@link Defect#LEAKS_HOUSEKEEPER_THREAD}, so that the meta-test can end them after. */
    static final Set<Thread> LEAKED_HOUSEKEEPERS = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private static final java.util.concurrent.atomic.AtomicInteger HOUSEKEEPERS =
            new java.util.concurrent.atomic.AtomicInteger();

    /** Ends every thread leaked by {@link Defect#LEAKS_HOUSEKEEPER_THREAD}. */
    static void stopLeakedHousekeepers() throws InterruptedException {
        for (Thread t : LEAKED_HOUSEKEEPERS) {
            t.interrupt();
            t.join(5_000);
            LEAKED_HOUSEKEEPERS.remove(t);
        }
    }

    static final Set<LockFeature> ALL = EnumSet.of(
            LockFeature.REENTRANT,
            LockFeature.FAIR,
            LockFeature.FENCING,
            LockFeature.DURABLE_FENCING,
            LockFeature.LEASE_EXPIRY,
            LockFeature.AUTO_RENEWAL,
            LockFeature.SESSION_BOUND,
            LockFeature.BLOCKING_WAKEUP,
            LockFeature.LOSS_DETECTION);

    private static final AtomicLong SESSIONS = new AtomicLong();

    private final MemoryStore store;
    private final String name;
    private final Set<LockFeature> features;
    private final Duration leaseTime;
    private final Set<Defect> defects;
    private volatile long session = SESSIONS.incrementAndGet();

    MemoryLockBackend(
            MemoryStore store, String name, Set<LockFeature> features, Duration leaseTime, Set<Defect> defects) {
        this.store = store;
        this.name = name;
        this.features = Set.copyOf(features);
        this.leaseTime = leaseTime;
        this.defects = defects.isEmpty() ? Set.of() : EnumSet.copyOf(defects);
        store.connections.incrementAndGet();
        if (has(Defect.LEAKS_HOUSEKEEPER_THREAD)) {
            // Named after the thread that opens the client, as ZooKeeper's client names its threads: the leak check
            // must rely on no name (here it even starts with the name of the TCK's own thread).
            Thread housekeeper = new Thread(
                    () -> {
                        while (!Thread.currentThread().isInterrupted()) {
                            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
                        }
                    },
                    Thread.currentThread().getName() + "-pool-housekeeper-" + HOUSEKEEPERS.incrementAndGet());
            housekeeper.setDaemon(true);
            LEAKED_HOUSEKEEPERS.add(housekeeper);
            housekeeper.start();
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Set<LockFeature> features() {
        return features;
    }

    @Override
    public Duration leaseTime() {
        if (has(Defect.EXPIRES_SILENTLY)) {
            return storeLeaseTime().multipliedBy(20);
        }
        return features.contains(LockFeature.LEASE_EXPIRY) ? leaseTime : Duration.ZERO;
    }

    /** How long the store keeps a grant without renewal; zero for never. */
    private Duration storeLeaseTime() {
        if (!features.contains(LockFeature.LEASE_EXPIRY)) {
            return Duration.ZERO;
        }
        if (has(Defect.STORE_KEEPS_LEASES_LONGER)) {
            return leaseTime.multipliedBy(13).dividedBy(10);
        }
        if (has(Defect.STORE_KEEPS_LEASES_SHORTER)) {
            return leaseTime.multipliedBy(3).dividedBy(4);
        }
        return leaseTime;
    }

    @Override
    public Duration renewInterval() {
        return features.contains(LockFeature.AUTO_RENEWAL) ? leaseTime.dividedBy(3) : Duration.ZERO;
    }

    /** Set once an operation of this client found the store down. */
    private volatile boolean sawOutage;

    private boolean has(Defect d) {
        return defects.contains(d);
    }

    private void checkUp() {
        store.operations.incrementAndGet();
        if (has(Defect.CALLS_FAIL_WHEN_INTERRUPTED) && Thread.currentThread().isInterrupted()) {
            throw new LockBackendException(
                    "memory store call failed", new java.net.SocketException("Closed by interrupt"));
        }
        if (store.down) {
            sawOutage = true;
            throw new LockBackendException(
                    "memory store is down (simulated outage)", new java.net.ConnectException("store unreachable"));
        }
    }

    /** Drops an expired holder; caller holds the store lock. */
    private void expireIfDue(String key, MemoryStore.KeyState ks, long now) {
        Grant h = ks.holder;
        if (h != null && h.expires(now) && !has(Defect.NEVER_EXPIRES)) {
            ks.holder = null;
            if (has(Defect.TOKEN_RESETS_AFTER_CRASH)) {
                store.crashCounters.remove(key);
            }
            if (!has(Defect.EXPIRES_SILENTLY) && !has(Defect.STORE_KEEPS_LEASES_SHORTER)) {
                h.request.reportLost("lease expired", null);
            }
            store.changed.signalAll();
        }
    }

    @Override
    public BackendLease acquire(AcquireRequest request) throws InterruptedException {
        // The defect folds case, as a case-insensitive collation would.
        String key =
                has(Defect.CASE_INSENSITIVE_KEYS) ? request.key().toLowerCase(java.util.Locale.ROOT) : request.key();
        if (has(Defect.KEYS_TRUNCATED_AT_255) && key.length() > 255) {
            key = key.substring(0, 255);
        }
        if (has(Defect.KEYS_WITHOUT_SUPPLEMENTARY_CHARACTERS)
                && key.codePoints().anyMatch(Character::isSupplementaryCodePoint)) {
            throw new LockBackendException(
                    "memory store rejected the key",
                    new java.io.IOException("Incorrect string value for column 'lock_key' (3-byte utf8)"));
        }
        // Unblocks our condition wait when the core cancels (deadline, interrupt, close).
        if (!request.isTry() && !has(Defect.UNCANCELLABLE_STORE_WAIT)) {
            request.onCancel(() -> {
                store.lock.lock();
                try {
                    store.changed.signalAll();
                } finally {
                    store.lock.unlock();
                }
            });
        }
        long remaining = request.remainingNanos();
        long deadline = request.isTry() || remaining == Long.MAX_VALUE
                ? request.deadlineNanos()
                : System.nanoTime() + (has(Defect.TIMED_ACQUIRE_RETURNS_EARLY) ? remaining / 2 : remaining);
        if (has(Defect.WAIT_TIMEOUT_IN_WRONG_UNIT) && !request.isTry() && remaining != Long.MAX_VALUE) {
            // The bug: seconds handed to a call that counts milliseconds.
            deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TimeUnit.NANOSECONDS.toSeconds(remaining));
        }
        long requestToken = 0;
        if (has(Defect.TOKEN_STAMPED_AT_REQUEST)) {
            store.lock.lock();
            try {
                checkUp();
                requestToken = nextToken(key, null); // the bug: drawn before the grant, in a call of its own
            } finally {
                store.lock.unlock();
            }
            // The round trip to the acquire call, 2 ms for every other request: requests that draw their tokens
            // together reach the queue in another order.
            if (REQUEST_DRAWS.getAndIncrement() % 2 == 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(2_000_000);
            }
        }
        Thread listener = has(Defect.LEAKS_LISTENER_OF_CANCELLED_WAITER) && !request.isTry() ? startListener() : null;
        boolean leakListener = false;
        // Lock.lock() (not interruptible): an interrupt is noted, the wait goes on in place, the status is restored.
        boolean absorbedInterrupt = false;
        store.lock.lock();
        try {
            checkUp();
            Object me = null;
            long tryUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(40);
            MemoryStore.KeyState ks = store.keys.computeIfAbsent(key, k -> new MemoryStore.KeyState());
            for (boolean first = true; ; first = false) {
                if (!first) {
                    store.operations.incrementAndGet(); // each re-check after a wait is a request
                }
                long now = System.nanoTime();
                expireIfDue(key, ks, now);
                boolean restarting = now - store.grantsFromNanos < 0 && !has(Defect.GRANTS_RIGHT_AFTER_RESTART);
                if (me instanceof Pending p && p.assigned != null) {
                    return p.assigned; // handed over by a release
                }
                Object owner = storeOwner();
                if (owner != null && ks.holder != null && ks.holder.storeOwner == owner) {
                    // The bug: the store sees the same owner and counts a re-entry.
                    if (me != null) {
                        ks.waiters.remove(me);
                    }
                    ks.holder.storeHolds[0]++;
                    return new Grant(key, request, now, ks.holder.token, ks.holder.storeHolds);
                }
                if (ks.holder == null
                        && !restarting
                        && (me == null ? ks.waiters.isEmpty() : nextInLine(ks) == me)
                        && !queueNameTaken(key)) {
                    if (me != null) {
                        ks.waiters.remove(me);
                    }
                    Grant g = new Grant(
                            key,
                            request,
                            now,
                            has(Defect.TOKEN_STAMPED_AT_REQUEST) ? requestToken : nextToken(key, ks));
                    ks.holder = g;
                    return g;
                }
                long left = request.isTry()
                        ? (has(Defect.TRY_WAITS_40MS) ? tryUntil - now : 0)
                        : deadline == Long.MAX_VALUE ? Long.MAX_VALUE : deadline - now;
                if (left <= 0 || (request.isCancelled() && !has(Defect.IGNORES_CANCEL))) {
                    if (left <= 0 && !request.isTry() && has(Defect.TIMED_ACQUIRE_OVERSHOOTS)) {
                        // Gives up seconds after its deadline, and ignores the core's cancel signal meanwhile.
                        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
                        while (until - System.nanoTime() > 0) {
                            store.changed.awaitNanos(until - System.nanoTime());
                        }
                    }
                    if (!(left <= 0 && has(Defect.LEAKS_WAITER_ON_TIMEOUT))) {
                        leave(key, ks, me);
                    }
                    leakListener = left > 0;
                    return null;
                }
                if (me == null) {
                    me = has(Defect.ORPHANS_RACED_HANDOFF) ? new Pending(request) : new Object();
                    join(ks, me);
                }
                long wait = left;
                Grant h = ks.holder;
                if (h != null && h.expiresAtNanos != Long.MAX_VALUE && !has(Defect.WAITER_BLIND_TO_EXPIRY)) {
                    wait = Math.min(wait, Math.max(1, h.expiresAtNanos - now));
                }
                if (restarting) {
                    wait = Math.min(wait, Math.max(1, store.grantsFromNanos - now));
                }
                long poll = pollNanos(request);
                if (poll == 0 && has(Defect.LOSES_WAKEUPS) && WAITS.incrementAndGet() % 4 == 0) {
                    poll = TimeUnit.MILLISECONDS.toNanos(500); // this wait's wake-up is lost
                }
                if (poll > 0) {
                    wait = Math.min(wait, poll);
                }
                if (has(Defect.DROPS_ALTERNATE_RELEASE_NOTIFICATIONS)) {
                    wait = Math.min(wait, TimeUnit.MILLISECONDS.toNanos(500)); // the fallback re-check
                }
                try {
                    if (poll > 0) {
                        // Not woken by releases: sleeps out its poll interval (uninterruptibly, like a sleep loop).
                        long until = System.nanoTime() + wait;
                        while (until - System.nanoTime() > 0
                                && !Thread.currentThread().isInterrupted()) {
                            store.lock.unlock();
                            try {
                                Thread.sleep(Math.max(1, (until - System.nanoTime()) / 1_000_000));
                            } finally {
                                store.lock.lock();
                            }
                        }
                        if (Thread.interrupted()) {
                            throw new InterruptedException();
                        }
                    } else if (has(Defect.UNCANCELLABLE_STORE_WAIT)) {
                        uncancellableStoreCall(Math.min(left, UNCANCELLABLE_CALL.toNanos()));
                    } else {
                        store.changed.awaitNanos(wait);
                    }
                    boolean pastDeadline = deadline != Long.MAX_VALUE && deadline - System.nanoTime() <= 0;
                    if (has(Defect.ORPHANS_RACED_HANDOFF) && (request.isCancelled() || pastDeadline)) {
                        giveUpWithoutLooking(key, ks, me);
                        leakListener = !pastDeadline;
                        return null;
                    }
                } catch (InterruptedException e) {
                    if (has(Defect.ORPHANS_RACED_HANDOFF) && request.isInterruptible()) {
                        giveUpWithoutLooking(key, ks, me);
                        throw e;
                    }
                    if (!request.isInterruptible() && !has(Defect.REQUEUES_ON_INTERRUPT)) {
                        absorbedInterrupt = !has(Defect.SWALLOWS_INTERRUPT);
                        continue;
                    }
                    if (!has(Defect.LEAKS_WAITER_ON_INTERRUPT)) {
                        leave(key, ks, me);
                    }
                    throw e;
                }
                if (store.down) {
                    leave(key, ks, me);
                    checkUp();
                }
                // A restart may have dropped our state object: continue on the current one.
                MemoryStore.KeyState current = store.keys.get(key);
                if (current != ks) {
                    me = null;
                    ks = store.keys.computeIfAbsent(key, k -> new MemoryStore.KeyState());
                }
            }
        } finally {
            store.lock.unlock();
            if (absorbedInterrupt) {
                Thread.currentThread().interrupt();
            }
            if (listener != null && !leakListener) {
                listener.interrupt(); // the bug: a cancelled wait does not get here with leakListener false
            }
        }
    }

    private static final java.util.concurrent.atomic.AtomicInteger LISTENERS =
            new java.util.concurrent.atomic.AtomicInteger();

    /** The {@link Defect#LEAKS_LISTENER_OF_CANCELLED_WAITER} thread: parks until interrupted. */
    private Thread startListener() {
        Thread t = new Thread(
                () -> {
                    while (!Thread.currentThread().isInterrupted()) {
                        java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
                    }
                    LEAKED_HOUSEKEEPERS.remove(Thread.currentThread());
                },
                name + "-wakeup-listener-" + LISTENERS.incrementAndGet());
        t.setDaemon(true);
        LEAKED_HOUSEKEEPERS.add(t);
        t.start();
        return t;
    }

    /** Queues {@code me}; under {@link Defect#QUEUE_OF_EIGHT} past eight places, on a stack. Caller holds the lock. */
    private void join(MemoryStore.KeyState ks, Object me) {
        if (has(Defect.QUEUE_OF_EIGHT) && ks.waiters.size() >= 8) {
            java.util.ArrayDeque<Object> overflow = new java.util.ArrayDeque<>();
            while (ks.waiters.size() > 8) {
                overflow.addFirst(ks.waiters.pollLast());
            }
            ks.waiters.add(me); // the bug: the newest overflow waiter goes first
            ks.waiters.addAll(overflow);
        } else {
            ks.waiters.add(me);
        }
    }

    /**
     * {@link Defect#QUEUE_UNDER_DERIVED_NAME}: whether {@code key} names the wait queue of another key that has
     * waiters. Caller holds the store lock.
     */
    private boolean queueNameTaken(String key) {
        if (!has(Defect.QUEUE_UNDER_DERIVED_NAME) || !key.endsWith(":w")) {
            return false;
        }
        MemoryStore.KeyState base = store.keys.get(key.substring(0, key.length() - 2));
        return base != null && !base.waiters.isEmpty();
    }

    /**
     * {@link Defect#ORPHANS_RACED_HANDOFF}: deletes the queue entry in a store call of its own, and does not look
     * whether a release handed the key over meanwhile. Caller holds the store lock; it is let go for the call.
     */
    private void giveUpWithoutLooking(String key, MemoryStore.KeyState ks, Object me) {
        store.lock.unlock();
        try {
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
        } finally {
            store.lock.lock();
        }
        ks.waiters.remove(me);
        store.dropIfUnused(key, ks); // the bug: a grant handed to me stays, held by nobody
    }

    /**
     * The {@link Defect#UNCANCELLABLE_STORE_WAIT} wait: a blocking call of up to {@code nanos} that only a change in
     * the store ends; an interrupt is noted and set again once the call returns.
     */
    private void uncancellableStoreCall(long nanos) {
        long end = System.nanoTime() + nanos;
        boolean interrupted = false;
        while (true) {
            long left = end - System.nanoTime();
            if (left <= 0) {
                break;
            }
            try {
                store.changed.awaitNanos(left);
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Whom the store-side re-entry defects take for the owner; null for the correct backend (owner per grant). */
    private Object storeOwner() {
        if (has(Defect.REENTERS_PER_CLIENT)) {
            return this;
        }
        if (has(Defect.REENTERS_PER_THREAD)) {
            return Thread.currentThread();
        }
        return null;
    }

    /** The poll interval of the polling defects (waiters not woken by releases); 0 for the correct wake-up. */
    private long pollNanos(AcquireRequest request) {
        if (has(Defect.POLL_WAKEUP_WITHOUT_DEADLINE) && request.remainingNanos() == Long.MAX_VALUE) {
            return TimeUnit.MILLISECONDS.toNanos(30);
        }
        if (has(Defect.POLL_WAKEUP_150MS)) {
            return TimeUnit.MILLISECONDS.toNanos(150);
        }
        if (has(Defect.POLL_WAKEUP_30MS)) {
            return TimeUnit.MILLISECONDS.toNanos(30);
        }
        return 0;
    }

    private Object nextInLine(MemoryStore.KeyState ks) {
        return has(Defect.UNFAIR_ORDER) ? ks.waiters.peekLast() : ks.waiters.peekFirst();
    }

    private void leave(String key, MemoryStore.KeyState ks, Object me) {
        if (me != null) {
            if (has(Defect.KEEPS_ABANDONED_WAITER_RECORDS) && ks.waiters.contains(me)) {
                ks.abandoned++; // the bug: marked abandoned, never deleted
            }
            ks.waiters.remove(me);
            store.changed.signalAll(); // the next in line may be free to go now
        }
        store.dropIfUnused(key, ks);
    }

    private long nextToken(String key, MemoryStore.KeyState ks) {
        if (has(Defect.TOKEN_RESETS_AFTER_CRASH)) {
            // The bug: the counter lives with the lock's state, so a crash that drops the state resets it.
            return store.crashCounters.merge(key, 1L, Long::sum);
        }
        if (has(Defect.TOKENS_RESET_ON_EMPTY_RESTART)) {
            return store.counters.merge(key, 1L, Long::sum);
        }
        // Never below the clock in microseconds, so that tokens keep rising after a restart that lost the counters.
        long floor = java.time.temporal.ChronoUnit.MICROS.between(java.time.Instant.EPOCH, java.time.Instant.now());
        return store.counters.merge(key, floor, (last, now) -> Math.max(last + 1, now));
    }

    /** Kills this client's session from the store's side: its grants are dropped and reported lost. */
    void killSession() {
        store.lock.lock();
        try {
            long dead = session;
            session = SESSIONS.incrementAndGet();
            if (has(Defect.KILLED_SESSION_LOCKS_RESTORED)) {
                return; // the bug: the new session takes the dead one's locks over, so none is freed
            }
            for (Iterator<Map.Entry<String, MemoryStore.KeyState>> it =
                            store.keys.entrySet().iterator();
                    it.hasNext(); ) {
                MemoryStore.KeyState ks = it.next().getValue();
                Grant h = ks.holder;
                if (h != null && h.session == dead) {
                    ks.holder = null;
                    if (has(Defect.TOKEN_RESETS_AFTER_CRASH)) {
                        store.crashCounters.remove(h.key);
                    }
                    h.request.reportLost("session killed", null);
                    if (ks.waiters.isEmpty()) {
                        it.remove();
                    }
                }
            }
            store.changed.signalAll();
        } finally {
            store.lock.unlock();
        }
    }

    /** The session ends with the client's connection: the store drops the locks it still holds for it. */
    private void endSession() {
        store.lock.lock();
        try {
            for (Iterator<Map.Entry<String, MemoryStore.KeyState>> it =
                            store.keys.entrySet().iterator();
                    it.hasNext(); ) {
                MemoryStore.KeyState ks = it.next().getValue();
                Grant h = ks.holder;
                if (h != null && h.client() == this) {
                    ks.holder = null;
                    if (ks.waiters.isEmpty() && ks.abandoned == 0) {
                        it.remove();
                    }
                }
            }
            store.changed.signalAll();
        } finally {
            store.lock.unlock();
        }
    }

    /**
     * Renews every lease whose "connection" answers at once, then waits for the stalled ones (up to {@link
     * #STALLED_CALL} each, all at the same time), so that a stalled lease delays no other lease's outcome.
     */
    @Override
    public void renew(List<BackendLease> leases, RenewalReport report) {
        long sentAt = System.nanoTime();
        store.lock.lock();
        try {
            if (store.down && has(Defect.RENEW_SWALLOWS_OUTAGE)) {
                // The bug: "could not reach the store" read as "renewed".
                leases.forEach(l -> report.renewed(l, sentAt));
                return;
            }
            try {
                checkUp();
            } catch (LockBackendException e) {
                renewalFailed = true;
                throw e;
            }
            if (has(Defect.RENEWAL_WRITTEN_LATE)) {
                // The bug: "renewed" before the store saw it; the write lands later, whatever happened meanwhile.
                for (BackendLease l : leases) {
                    Grant g = (Grant) l;
                    report.renewed(g, sentAt);
                    LATE_RENEWALS.schedule(() -> upsert(g), 30, TimeUnit.MILLISECONDS);
                }
                return;
            }
            if (has(Defect.RENEWS_ONE_AFTER_ANOTHER)) {
                List<Grant> inOrder = leases.stream()
                        .map(Grant.class::cast)
                        .sorted(java.util.Comparator.comparingLong(g -> g.sequence))
                        .toList();
                for (Grant g : inOrder) {
                    long sent = System.nanoTime();
                    if (!awaitAnswer(g, sent + STALLED_CALL.toNanos())) {
                        report.unconfirmed(g, stalledCall());
                        continue;
                    }
                    renewOne(g, report, sent);
                }
                return;
            }
            List<Grant> stalled = new java.util.ArrayList<>();
            for (BackendLease l : leases) {
                Grant g = (Grant) l;
                if (store.stalled.contains(g.key)) {
                    stalled.add(g);
                } else {
                    renewOne(g, report, sentAt);
                }
            }
            long until = System.nanoTime() + STALLED_CALL.toNanos();
            for (Grant g : stalled) {
                if (awaitAnswer(g, until)) {
                    renewOne(g, report, sentAt);
                } else {
                    report.unconfirmed(g, stalledCall());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the client is closing: what is left stays unreported
        } finally {
            store.lock.unlock();
        }
    }

    private static LockBackendException stalledCall() {
        return new LockBackendException(
                "memory store call timed out", new java.net.SocketTimeoutException("Read timed out (stalled)"));
    }

    /** Waits, with the store lock held, until {@code g}'s "connection" answers or {@code untilNanos}; false then. */
    private boolean awaitAnswer(Grant g, long untilNanos) throws InterruptedException {
        while (store.stalled.contains(g.key)) {
            long left = untilNanos - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            store.changed.awaitNanos(left);
        }
        return true;
    }

    /** Renews one lease that answered; caller holds the store lock. */
    private void renewOne(Grant g, RenewalReport report, long sentAt) {
        MemoryStore.KeyState ks = store.keys.get(g.key);
        if (ks != null) {
            expireIfDue(g.key, ks, System.nanoTime());
        }
        boolean heldByOwner =
                ks != null && ks.holder != null && g.storeOwner != null && ks.holder.storeOwner == g.storeOwner;
        if ((ks == null || (ks.holder != g && !heldByOwner)) && !has(Defect.RENEW_IGNORES_LOSS)) {
            report.lost(g, "no longer held in the memory store");
        } else {
            g.expiresAtNanos = storeLeaseTime().isZero()
                    ? Long.MAX_VALUE
                    : System.nanoTime() + storeLeaseTime().toNanos();
            report.renewed(g, sentAt);
        }
    }

    /** The late write of {@link Defect#RENEWAL_WRITTEN_LATE}: the owner's grant, with a fresh expiry, whatever holds. */
    private void upsert(Grant g) {
        store.lock.lock();
        try {
            MemoryStore.KeyState ks = store.keys.computeIfAbsent(g.key, k -> new MemoryStore.KeyState());
            ks.holder = g;
            g.expiresAtNanos = System.nanoTime() + storeLeaseTime().toNanos();
        } finally {
            store.lock.unlock();
        }
    }

    @Override
    public void close() {
        ScheduledExecutorService f = flusher;
        if (f != null) {
            f.shutdownNow(); // the bug: what is queued is dropped, not sent
        }
        // The store belongs to the test; only this client's "connection" to it ends. A store bound to sessions alone
        // drops the session's locks with it; with leases, they expire (as they did before sessions were modelled).
        if (features.contains(LockFeature.SESSION_BOUND)
                && !features.contains(LockFeature.LEASE_EXPIRY)
                && !has(Defect.CLOSE_KEEPS_SESSION_LOCKS)) {
            endSession();
        }
        if (!has(Defect.LEAKS_CONNECTION)) {
            store.connections.decrementAndGet();
        }
    }

    /** The {@link Defect#RELEASES_WRITE_BEHIND} flusher and its queue. */
    private volatile ScheduledExecutorService flusher;

    private final ConcurrentLinkedQueue<Grant> pendingReleases = new ConcurrentLinkedQueue<>();

    private synchronized void writeBehind(Grant g) {
        if (flusher == null) {
            flusher = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, name + "-release-flusher");
                t.setDaemon(true);
                return t;
            });
        }
        pendingReleases.add(g);
        flusher.schedule(
                () -> {
                    for (Grant p; (p = pendingReleases.poll()) != null; ) {
                        try {
                            p.releaseNow();
                        } catch (RuntimeException e) {
                            // a write-behind failure is nobody's to report
                        }
                    }
                },
                100,
                TimeUnit.MILLISECONDS);
    }

    /** One grant in the store. */
    final class Grant implements BackendLease {
        final String key;
        final AcquireRequest request;
        final long confirmedAt;
        final long token;
        final long session = MemoryLockBackend.this.session;
        final Thread acquiredBy = Thread.currentThread();
        /** Grant order, for {@link Defect#RENEWS_ONE_AFTER_ANOTHER}. */
        final long sequence = GRANTS.incrementAndGet();
        /** The owner the store-side re-entry defects count holds for; null in the correct backend. */
        final Object storeOwner = storeOwner();
        /** Holds the store counts for {@link #storeOwner}, shared by the grants it re-entered. */
        final int[] storeHolds;

        volatile long expiresAtNanos;

        Grant(String key, AcquireRequest request, long now, long token) {
            this(key, request, now, token, new int[] {1});
        }

        Grant(String key, AcquireRequest request, long now, long token, int[] storeHolds) {
            this.storeHolds = storeHolds;
            this.key = key;
            this.request = request;
            this.confirmedAt = now;
            this.token = token;
            this.expiresAtNanos = storeLeaseTime().isZero()
                    ? Long.MAX_VALUE
                    : now + storeLeaseTime().toNanos();
        }

        boolean expires(long now) {
            return expiresAtNanos != Long.MAX_VALUE && now - expiresAtNanos >= 0;
        }

        @Override
        public long fencingToken() {
            return token;
        }

        @Override
        public long confirmedAtNanos() {
            return confirmedAt;
        }

        MemoryLockBackend client() {
            return MemoryLockBackend.this;
        }

        @Override
        public boolean release() {
            if (has(Defect.RELEASES_WRITE_BEHIND)) {
                writeBehind(this);
                return true;
            }
            return releaseNow();
        }

        boolean releaseNow() {
            store.lock.lock();
            try {
                while (store.down && has(Defect.RELEASE_WAITS_OUT_OUTAGE)) {
                    store.changed.awaitUninterruptibly(); // the bug: no timeout on the store call
                }
                checkUp();
                if (has(Defect.RELEASE_ON_ACQUIRING_THREAD_ONLY) && Thread.currentThread() != acquiredBy) {
                    return true;
                }
                MemoryStore.KeyState ks = store.keys.get(key);
                if (ks == null || ks.holder == null) {
                    return false;
                }
                if (storeOwner != null && ks.holder.storeOwner == storeOwner) {
                    if (--storeHolds[0] > 0) {
                        return true;
                    }
                    ks.holder = null;
                    store.changed.signalAll();
                    store.dropIfUnused(key, ks);
                    return true;
                }
                boolean sameClient = ks.holder.client() == MemoryLockBackend.this;
                boolean unchecked = has(Defect.RELEASE_WITHOUT_OWNER_CHECK)
                        || (has(Defect.RELEASE_UNCHECKED_ONCE_EXPIRED) && expires(System.nanoTime()))
                        || (has(Defect.RELEASE_UNCHECKED_AFTER_FAILED_RENEWAL) && renewalFailed);
                if (ks.holder != this && !unchecked && !(sameClient && has(Defect.OWNER_PER_CLIENT))) {
                    return false;
                }
                boolean mine = ks.holder == this;
                ks.holder = null;
                if (has(Defect.ORPHANS_RACED_HANDOFF) && ks.waiters.peekFirst() instanceof Pending p) {
                    ks.waiters.pollFirst();
                    Grant handed = p.owner().new Grant(key, p.request, System.nanoTime(), nextToken(key, ks));
                    ks.holder = handed;
                    p.assigned = handed;
                }
                boolean dropped = has(Defect.DROPS_ALTERNATE_RELEASE_NOTIFICATIONS)
                        && store.releaseNotifications.incrementAndGet() % 2 == 0;
                if (!(sawOutage && has(Defect.WAKEUPS_LOST_AFTER_OUTAGE)) && !dropped) {
                    store.changed.signalAll();
                }
                store.dropIfUnused(key, ks);
                return mine;
            } finally {
                store.lock.unlock();
            }
        }
    }
}
