package org.locksmith.lock.redis.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.redis.RedisLocks;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.LockBackend;
import org.locksmith.lock.spi.Permits;
import org.locksmith.lock.spi.RenewalReport;
import redis.clients.jedis.Connection;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.exceptions.JedisRedirectionException;
import redis.clients.jedis.util.Pool;

/**
 * The Redis backend: a hash per key with a {@code PEXPIRE} lease, changed only by {@link LockScripts}; waiters block
 * in {@code BLPOP} on a per-key wake-up list that a contended release pushes one element to.
 *
 * <p>{@code commands} serves every short command (acquire, release, renew, cancel signals) and {@code waits} the
 * blocking {@code BLPOP}s (see {@link WaitConnections}). They may be one client: then a local semaphore admits at most
 * half of its pool into {@code BLPOP} (see {@link #blockingPermits}), so waiters never take the connections that
 * releases and renewals need; with two clients, up to the wait client's pool size. The others queue locally and
 * re-try at the holder's lease end or when admitted.
 */
public final class RedisLockBackend implements LockBackend {
    private static final System.Logger LOG = System.getLogger("org.locksmith.lock.redis");
    private static final Set<LockFeature> FEATURES = Set.copyOf(EnumSet.of(
            LockFeature.REENTRANT,
            LockFeature.FENCING,
            LockFeature.DURABLE_FENCING,
            LockFeature.LEASE_EXPIRY,
            LockFeature.AUTO_RENEWAL,
            LockFeature.BLOCKING_WAKEUP,
            LockFeature.LOSS_DETECTION));
    /** How many leases one renewal script call extends at most: bounds the time the script blocks Redis. */
    private static final int RENEW_BATCH = 500;
    /**
     * How long a script answered "not now" ({@link #isPassing}: a slot migration or a failover in progress) is sent
     * again, with back-off. A waiting acquire retries for as long as its deadline allows.
     */
    static final long TRY_AGAIN_MILLIS = 2_000;
    /** The longest back-off between attempts of a waiter whose server is failing over. */
    private static final long FAILOVER_BACK_OFF_MILLIS = 100;
    /** Threads sending cancel signals: each signal is one short command, so a few serve many waiters. */
    private static final int CANCEL_THREADS = 4;
    /** {@link #sharedPermits}: guarded by itself. */
    private static final Map<Object, Permits> PERMITS_BY_POOL = new WeakHashMap<>();

    private final UnifiedJedis commands;
    private final UnifiedJedis waits;
    private final WaitConnections waitConnections;
    private final List<AutoCloseable> owned;
    private final boolean cluster;
    private final RedisSettings settings;
    private final String leaseMillis;
    private final String restartHoldOffMillis;
    private final String wakeTtlMillis;
    private final int blockingLimit;
    private final Permits blockingPermits;
    /** Waiting acquires' attempts in flight at once (see {@link #attemptPermits(UnifiedJedis, UnifiedJedis, int)}). */
    private final Permits attemptPermits;

    private final AtomicBoolean overflowLogged = new AtomicBoolean();
    private final ThreadPoolExecutor canceller;
    /** Cluster renewal: one thread per node in a round, idle threads end after 5 s. */
    private final ThreadPoolExecutor renewThreads;
    /** Whether the servers run scripts on keys of many slots of one node; off once neither script compiles. */
    private volatile boolean crossSlotRenewal = true;
    /**
     * The per-node renewal script: {@link LockScripts#RENEW_NODE} (flagged, Redis 7.0+) until a server refuses its
     * flags line, then {@link LockScripts#RENEW_NODE_UNFLAGGED} (before 7.0, which needs no flag).
     */
    private volatile String nodeScript = LockScripts.RENEW_NODE;

    /**
     * @param commands the client for short commands
     * @param waits the client for blocking waits (may be {@code commands} when the application gave one client)
     * @param owned the clients this backend closes on {@link #close()} (none when the application owns them)
     */
    @SuppressWarnings("deprecation") // JedisCluster: deprecated in Jedis 8 but what many applications still hand us
    public RedisLockBackend(
            UnifiedJedis commands, UnifiedJedis waits, List<AutoCloseable> owned, RedisSettings settings) {
        this.commands = commands;
        this.waits = waits;
        this.owned = List.copyOf(owned);
        if (settings.waitReplicas() > 0
                && !(commands instanceof RedisClient
                        || commands instanceof StandaloneRedis
                        || commands instanceof SentinelRedis
                        || WaitConnections.isCluster(commands))) {
            throw new IllegalArgumentException("Waiting for replicas sends WAIT on the connection of each grant and"
                    + " renewal, which needs a RedisClient, RedisClusterClient or JedisCluster, not "
                    + commands.getClass().getName());
        }
        this.cluster = commands instanceof JedisCluster || commands instanceof RedisClusterClient;
        this.settings = settings;
        this.leaseMillis = Long.toString(settings.leaseTime().toMillis());
        this.restartHoldOffMillis = Long.toString(settings.restartHoldOff().toMillis());
        this.wakeTtlMillis = Long.toString(settings.wakeTtlMillis());
        this.blockingLimit = blockingPermits(commands, waits, settings.maxBlockingWaiters());
        this.blockingPermits = sharedPermits(waits, blockingLimit);
        this.attemptPermits = new Permits(attemptPermits(commands, waits, blockingLimit));
        this.canceller = cancelSignalSender(blockingLimit);
        AtomicInteger renewers = new AtomicInteger();
        this.renewThreads =
                new ThreadPoolExecutor(0, Integer.MAX_VALUE, 5, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
                    Thread t = new Thread(r, "locksmith-redis-renew-" + renewers.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        this.waitConnections = new WaitConnections(waits, canceller);
    }

    /**
     * The threads that send cancel signals and the clean-up releases of acquires whose reply was lost, and give broken
     * wait connections back to their pool (see {@link WaitConnections}). Not the core's
     * threads, which call the cancel actions: a slow Redis must not delay renewals and other cancellations, so a
     * cancel action only queues its signal here and never runs it itself, and no waiter waits for its signal to be
     * sent. The queue is unbounded, so that no signal or clean-up is dropped under a burst of timed-out attempts; it
     * holds at most one signal per blocked waiter and one release per failed attempt.
     */
    static ThreadPoolExecutor cancelSignalSender(int blockingLimit) {
        AtomicInteger threads = new AtomicInteger();
        ThreadFactory factory = r -> {
            Thread t = new Thread(r, "locksmith-redis-cancel-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        int size = Math.min(CANCEL_THREADS, blockingLimit);
        ThreadPoolExecutor executor = new ThreadPoolExecutor(
                size,
                size,
                5,
                TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(),
                factory,
                new ThreadPoolExecutor.AbortPolicy());
        executor.allowCoreThreadTimeOut(true);
        return executor;
    }

    /**
     * How many threads may block in {@code BLPOP} at once. Each holds a connection of the wait client's pool for as
     * long as it blocks, so with one client shared by waits and short commands at most half of its pool may block:
     * releases, renewals, cancel signals and the application's own commands keep the other half, however many threads
     * wait. A separate wait client may be filled up to its pool size.
     */
    static int blockingPermits(UnifiedJedis commands, UnifiedJedis waits, int maxBlockingWaiters) {
        int capacity = WaitConnections.poolCapacity(waits);
        if (waits != commands) {
            return Math.min(maxBlockingWaiters, capacity);
        }
        if (capacity < 2) {
            throw new IllegalArgumentException("A Redis client whose pool has " + capacity + " connection cannot be"
                    + " shared by lock waiters (each blocks one connection in BLPOP) and releases/renewals; give it a"
                    + " larger pool or pass a separate waitClient");
        }
        return Math.min(maxBlockingWaiters, capacity / 2);
    }

    /**
     * How many attempts of waiting acquires may be in flight at once: half of the command pool, less what blocking
     * waits may hold of it when they share it, so that releases, renewals and cancel signals always find a
     * connection, and ten thousand waiting threads queue fairly until their deadlines instead of failing the pool's
     * borrow after the client's timeout. No limit for a client whose pool is unknown.
     */
    static int attemptPermits(UnifiedJedis commands, UnifiedJedis waits, int blockingLimit) {
        int capacity = WaitConnections.poolCapacity(commands);
        if (capacity == Integer.MAX_VALUE) {
            return Integer.MAX_VALUE;
        }
        int free = waits == commands ? capacity - blockingLimit : capacity;
        return Math.max(1, free / 2);
    }

    /**
     * The permits to block in {@code BLPOP} on the pool of {@code waits}, shared by every backend on that pool: two
     * lock clients built on one application client must not together park more of its connections than one may
     * (each holding its own half would leave none for releases and renewals). The first backend on a pool sets the
     * number; the pool is held weakly, so a closed client's entry goes with it.
     */
    private static Permits sharedPermits(UnifiedJedis waits, int permits) {
        synchronized (PERMITS_BY_POOL) {
            return PERMITS_BY_POOL.computeIfAbsent(WaitConnections.pool(waits), pool -> new Permits(permits));
        }
    }

    /** How many threads may block in {@code BLPOP} at once (see {@link #blockingPermits}), for tests and tools. */
    public int maxBlockingWaiters() {
        return blockingLimit;
    }

    /**
     * Checks that the store answers (and, on standalone servers, loads the scripts) so a bad URL fails at open, and
     * whether it may evict lock keys ({@link #checkEviction}).
     */
    public void verify(RedisLocks.EvictionCheck evictionCheck) {
        try {
            if (cluster) {
                commands.exists(LockKeys.of(settings.prefix(), "ping").hash());
            } else {
                commands.ping();
                for (String script : LockScripts.all()) {
                    commands.scriptLoad(script);
                }
                if (waits != commands) {
                    waits.ping();
                }
            }
        } catch (JedisException e) {
            throw failure("is not reachable or refused the connection", e);
        }
        checkEviction(evictionCheck);
    }

    /**
     * Looks at {@code maxmemory} and {@code maxmemory-policy} on every server that holds locks (each master of a
     * cluster): with a memory limit, any policy but {@code noeviction} may evict a held lock's hash (each has an
     * expiry, so {@code volatile-*} policies take it as readily as {@code allkeys-*}), which frees the lock for
     * another owner while its holder's lease looks valid until its next renewal.
     */
    private void checkEviction(RedisLocks.EvictionCheck check) {
        if (check == RedisLocks.EvictionCheck.IGNORE) {
            return;
        }
        for (Map.Entry<String, Pool<Connection>> node :
                WaitConnections.nodePools(commands, settings.address()).entrySet()) {
            Map<String, String> config;
            try (Connection connection = node.getValue().getResource()) {
                config = new Jedis(connection).configGet("maxmemory*");
            } catch (JedisException e) {
                String why = "Could not check whether Redis at " + node.getKey() + " may evict lock keys (CONFIG GET"
                        + " maxmemory*: " + e.getMessage() + "); set " + RedisConnections.EVICTION_CHECK
                        + "=ignore if its eviction policy is known to be noeviction";
                if (check == RedisLocks.EvictionCheck.REFUSE) {
                    throw new LockBackendException(why, e);
                }
                LOG.log(System.Logger.Level.WARNING, why);
                continue;
            }
            String maxmemory = config.getOrDefault("maxmemory", "0");
            String policy = config.getOrDefault("maxmemory-policy", "noeviction");
            if (maxmemory.equals("0") || policy.equals("noeviction")) {
                continue;
            }
            String why = "Redis at " + node.getKey() + " may evict lock keys (maxmemory " + maxmemory
                    + ", maxmemory-policy " + policy + "): an evicted lock is free for another owner while its holder"
                    + " still sees isValid() true until its next renewal. Set maxmemory-policy noeviction (or"
                    + " maxmemory 0) on the servers that hold locks, or open with " + RedisConnections.EVICTION_CHECK
                    + "=ignore";
            if (check == RedisLocks.EvictionCheck.REFUSE) {
                throw new LockBackendException(why);
            }
            LOG.log(System.Logger.Level.WARNING, why);
        }
    }

    @Override
    public String name() {
        return cluster ? "redis-cluster" : "redis";
    }

    @Override
    public Set<LockFeature> features() {
        return FEATURES;
    }

    @Override
    public Duration leaseTime() {
        return settings.leaseTime();
    }

    @Override
    public Duration renewInterval() {
        return settings.leaseTime().dividedBy(3);
    }

    /** The settings, for tests and tools. */
    public RedisSettings settings() {
        return settings;
    }

    /** The keys under which this backend stores {@code userKey}, for tests and operators. */
    public LockKeys keysOf(String userKey) {
        return LockKeys.of(settings.prefix(), userKey);
    }

    @Override
    public BackendLease acquire(AcquireRequest request) throws InterruptedException {
        LockKeys keys = keysOf(request.key());
        Waiter waiter = null;
        // A tryAcquire never waits, so it must not make the holder's release push a wake-up nobody takes.
        boolean willWait = !request.isTry() && request.remainingNanos() > 0;
        // True from a consumed wake-up until the next attempt has run: a grant marks the new grant contended and a
        // refusal marks the holder's, so after it the next release wakes someone. A waiter that leaves in between
        // (exception, interrupt, deadline, close) must pass the wake-up on, or the next waiter sleeps until its
        // timeout although the key is free.
        boolean holdsWakeUp = false;
        try {
            while (true) {
                // A waiting acquire queues here for its attempt, until its deadline, rather than in the connection
                // pool, whose borrow gives up after the client's timeout (a try does not queue: it uses the pool).
                if (!request.isTry() && !attemptPermits.acquire(request, request.remainingNanos())) {
                    return null;
                }
                long sentAt = System.nanoTime();
                List<?> reply;
                LockBackendException failed = null;
                try {
                    reply = attempt(keys, request, willWait, waiter != null);
                } catch (LockBackendException e) {
                    reply = null;
                    failed = e;
                } finally {
                    if (!request.isTry()) {
                        attemptPermits.release();
                    }
                }
                if (failed != null) {
                    if (waitOutFailover(request, failed)) {
                        continue; // a failover: the client follows the new master meanwhile
                    }
                    throw failed;
                }
                holdsWakeUp = false;
                long value = asLong(reply.get(1));
                if (asLong(reply.get(0)) == 1) {
                    return new RedisLease(this, keys, request, value, sentAt);
                }
                if (reply.size() > 2) {
                    request.refusedBecause(holdOffRefusal(asLong(reply.get(2))));
                }
                long remaining = request.remainingNanos();
                if (request.isTry() || remaining <= 0 || request.isCancelled()) {
                    return null;
                }
                if (waiter == null) {
                    waiter = new Waiter(keys, request);
                    request.onCancel(waiter::cancel);
                }
                holdsWakeUp = waiter.await(Math.min(remaining, waitCapNanos(value, settings.leaseTime())));
                if (request.isCancelled()) {
                    return null;
                }
            }
        } finally {
            if (holdsWakeUp) {
                waiter.passWakeUp();
            }
            if (waiter != null) {
                waiter.cleanUp();
                if (waiter.interruptSet) {
                    // An uninterruptible wait (Lock.lock()) set the status aside to block again: the caller gets it.
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /** Why a server in its restart hold-off refuses, for the timeout's message and the log. */
    private String holdOffRefusal(long endsAtEpochSecond) {
        return "Redis at " + settings.address() + " grants no lock until " + Instant.ofEpochSecond(endsAtEpochSecond)
                + " (server clock): it has been up for less than restartHoldOffMs=" + restartHoldOffMillis
                + ", since a server that restarted may have lost locks whose holders still believe they hold them;"
                + " set restartHoldOffMs=0 only for a server started empty for a test run (see lock-redis's README)";
    }

    /**
     * The longest a waiter may block, given what the refused acquire reported about the holder's lease: never past
     * its end (a crashed holder frees the key at expiry, unannounced), and at most one lease when the key has none.
     *
     * @param holderPttl the holder's {@code PTTL} as the acquire script saw it: {@code >= 0} a live lease (0 too: it
     *     ends within the current millisecond, and must not be taken for "no lease"), {@code -1} a key without expiry
     */
    static long waitCapNanos(long holderPttl, Duration lease) {
        return holderPttl >= 0 ? TimeUnit.MILLISECONDS.toNanos(holderPttl + 1) : lease.toNanos();
    }

    /**
     * One acquire script call. When it fails, only the reply may have been lost: Redis may have granted the lock to
     * this owner (unique to this attempt), which nobody would release before its lease ends. So unless the command
     * surely never left (no connection), the owner is released, owner-checked (harmless if nothing was granted).
     * When the server closed the connection it is alive, and the release runs before the failure is reported; when
     * it did not answer in time, a release now would as likely time out and double the failure's latency, so it is
     * sent once from a background thread instead.
     */
    private List<?> attempt(LockKeys keys, AcquireRequest request, boolean willWait, boolean waited) {
        Object raw = attemptOnce(keys, request, willWait, waited);
        if (!(raw instanceof Replicated r)) {
            return (List<?>) raw;
        }
        List<?> reply = (List<?>) r.reply();
        if (asLong(reply.get(0)) == 1 && r.acknowledged() < settings.waitReplicas()) {
            try {
                releaseOwner(keys, request.ownerId());
            } catch (RuntimeException e) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "Could not release key '" + keys.userKey() + "' after too few"
                                + " replicas acknowledged its grant; it frees at its lease end: " + e);
            }
            throw new LockBackendException("Redis at " + settings.address() + " granted key '" + keys.userKey()
                    + "' but only " + r.acknowledged() + " of " + settings.waitReplicas() + " replicas acknowledged"
                    + " the grant within " + settings.waitReplicasTimeout().toMillis() + " ms (waitReplicas); the"
                    + " grant was released");
        }
        return reply;
    }

    private Object attemptOnce(LockKeys keys, AcquireRequest request, boolean willWait, boolean waited) {
        try {
            return scriptOn(
                    keys.slot(),
                    LockScripts.ACQUIRE,
                    LockScripts.ACQUIRE_SHA,
                    List.of(keys.hash()),
                    List.of(
                            request.ownerId(),
                            leaseMillis,
                            willWait ? "1" : "0",
                            waited ? "1" : "0",
                            restartHoldOffMillis));
        } catch (LockBackendException e) {
            java.net.ConnectException refused = connectFailure(e);
            if (refused != null) {
                // Not a lost reply: no connection, so the script never left and there is nothing to clean up.
                throw new LockBackendException(
                        "Redis at " + settings.address() + " refused the connection (" + refused.getMessage()
                                + "): the acquire of key '" + keys.userKey() + "' was not sent, nothing was granted",
                        e);
            }
            if (neverSent(e) || e.getCause() instanceof JedisDataException) {
                throw e; // not sent, or answered with an error: nothing was granted
            }
            String owner = request.ownerId();
            if (closedByServer(e)) {
                try {
                    releaseOwner(keys, owner);
                } catch (JedisException cleanup) {
                    e.addSuppressed(cleanup);
                }
            } else {
                try {
                    canceller.execute(() -> {
                        try {
                            releaseOwner(keys, owner);
                        } catch (RuntimeException cleanup) {
                            LOG.log(
                                    System.Logger.Level.WARNING,
                                    "Could not release key '" + keys.userKey() + "' after an acquire whose reply was"
                                            + " lost; if it was granted it frees at its lease end: " + cleanup);
                        }
                    });
                } catch (RejectedExecutionException full) {
                    e.addSuppressed(full);
                }
            }
            throw e;
        }
    }

    /** Whether a failure happened before a command could reach the server (no connection to send it on). */
    private static boolean neverSent(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.net.ConnectException || t instanceof java.util.NoSuchElementException) {
                return true;
            }
        }
        return connectFailure(e) != null;
    }

    /**
     * The connection failure behind {@code e}, if a new connection could not be made: in its causes, or suppressed by
     * one of them (Jedis reports "Failed to connect to host:port" and adds each address's {@code ConnectException}
     * as suppressed, not as the cause).
     */
    private static java.net.ConnectException connectFailure(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.net.ConnectException c) {
                return c;
            }
            for (Throwable s : t.getSuppressed()) {
                if (s instanceof java.net.ConnectException c) {
                    return c;
                }
            }
        }
        return null;
    }

    @Override
    public void renew(List<BackendLease> leases, RenewalReport report) {
        if (cluster && crossSlotRenewal) {
            renewPerNode(leases, report);
            return;
        }
        renewPerSlot(leases, report);
    }

    /**
     * Cluster renewal: the leases grouped by the node that serves their slot, each node's leases renewed by one
     * script call per {@value #RENEW_BATCH} leases ({@link LockScripts#RENEW_NODE}, keys of many slots), the calls of
     * a node pipelined on one connection and the nodes in parallel, so a stalled node delays only its own leases.
     * A batch the node refuses (a slot moved or migrating: MOVED, ASK, TRYAGAIN, CROSSSLOT) falls back to one call
     * per slot, routed by the client. A server without script flags (before Redis 7.0) gets the script without its
     * flags line from then on, which it runs on keys of many slots as 7.0+ runs the flagged one; only if neither
     * compiles does renewal go one slot per call for good.
     */
    @SuppressWarnings("deprecation") // JedisCluster, see WaitConnections.nodePools
    private void renewPerNode(List<BackendLease> leases, RenewalReport report) {
        Map<String, List<RedisLease>> byNode = new LinkedHashMap<>();
        Map<String, Integer> slotOfNode = new HashMap<>();
        Map<Integer, String> nodeOfSlot = new HashMap<>();
        List<BackendLease> unrouted = new ArrayList<>();
        for (BackendLease lease : leases) {
            RedisLease l = (RedisLease) lease;
            int slot = l.keys.slot();
            String node = nodeOfSlot.get(slot);
            if (node == null) {
                try (Connection c = commands instanceof JedisCluster jc
                        ? jc.getConnectionFromSlot(slot)
                        : ((RedisClusterClient) commands).getConnectionFromSlot(slot)) {
                    node = c.getHostAndPort().toString();
                } catch (RuntimeException e) {
                    unrouted.add(l); // the per-slot path reports it
                    continue;
                }
                nodeOfSlot.put(slot, node);
                slotOfNode.putIfAbsent(node, slot);
            }
            byNode.computeIfAbsent(node, n -> new ArrayList<>()).add(l);
        }
        List<Future<?>> running = new ArrayList<>();
        for (Map.Entry<String, List<RedisLease>> e : byNode.entrySet()) {
            int slot = slotOfNode.get(e.getKey());
            Runnable work = () -> renewOnNode(slot, e.getValue(), report);
            try {
                running.add(renewThreads.submit(work));
            } catch (RejectedExecutionException closing) {
                work.run();
            }
        }
        if (!unrouted.isEmpty()) {
            renewPerSlot(unrouted, report);
        }
        boolean interrupted = false;
        for (Future<?> f : running) {
            while (true) {
                try {
                    f.get();
                    break;
                } catch (InterruptedException ie) {
                    interrupted = true; // return only once no call is in flight, as the SPI asks
                } catch (ExecutionException ee) {
                    LOG.log(System.Logger.Level.WARNING, "A node's renewal failed: " + ee.getCause(), ee.getCause());
                    break;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** The leases of one node: its batches pipelined on one connection of that node, one reply per batch. */
    @SuppressWarnings("deprecation") // JedisCluster, see WaitConnections.nodePools
    private void renewOnNode(int anySlot, List<RedisLease> leases, RenewalReport report) {
        String script = nodeScript;
        List<List<RedisLease>> batches = new ArrayList<>();
        for (int from = 0; from < leases.size(); from += RENEW_BATCH) {
            batches.add(leases.subList(from, Math.min(leases.size(), from + RENEW_BATCH)));
        }
        List<RedisLease> refused = new ArrayList<>();
        boolean flagsUnknown = false;
        long sentAt = System.nanoTime();
        List<Object> replies;
        try (Connection c = commands instanceof JedisCluster jc
                ? jc.getConnectionFromSlot(anySlot)
                : ((RedisClusterClient) commands).getConnectionFromSlot(anySlot)) {
            for (List<RedisLease> batch : batches) {
                String[] arguments = new String[batch.size() * 2 + 5];
                int i = 0;
                arguments[i++] = script;
                arguments[i++] = "1";
                arguments[i++] = batch.get(0).keys.hash();
                arguments[i++] = leaseMillis;
                arguments[i++] = Integer.toString(batch.size());
                for (RedisLease l : batch) {
                    arguments[i++] = l.keys.hash();
                }
                for (RedisLease l : batch) {
                    arguments[i++] = l.owner;
                }
                c.sendCommand(Protocol.Command.EVAL, arguments);
            }
            if (settings.waitReplicas() > 0) {
                replies = withWait(c, () -> {
                    c.sendCommand(Protocol.Command.WAIT, waitArguments());
                    return c.getMany(batches.size() + 1);
                });
                long acknowledged = asLong(replies.get(batches.size()));
                if (acknowledged < settings.waitReplicas()) {
                    LockBackendException failure = tooFewReplicas("a renewal", acknowledged);
                    leases.forEach(l -> report.unconfirmed(l, failure));
                    return;
                }
            } else {
                replies = c.getMany(batches.size());
            }
        } catch (RuntimeException e) {
            LockBackendException failure = failure("failed", e);
            leases.forEach(l -> report.unconfirmed(l, failure));
            return;
        }
        for (int b = 0; b < batches.size(); b++) {
            List<RedisLease> batch = batches.get(b);
            Object reply = replies.get(b);
            if (reply instanceof JedisDataException refusal) {
                String message = String.valueOf(refusal.getMessage()).toLowerCase(java.util.Locale.ROOT);
                if (message.contains("flag") || message.contains("compil") || message.contains("shebang")) {
                    flagsUnknown = true;
                }
                refused.addAll(batch);
                continue;
            }
            Set<Integer> gone = new HashSet<>();
            for (Object index : (List<?>) reply) {
                gone.add((int) asLong(index) - 1);
            }
            for (int i = 0; i < batch.size(); i++) {
                if (gone.contains(i)) {
                    report.lost(batch.get(i), "no longer held in Redis (renewal refused)");
                } else {
                    report.renewed(batch.get(i), sentAt);
                }
            }
        }
        if (flagsUnknown && script == LockScripts.RENEW_NODE) {
            // A server before 7.0: it knows no script flags and needs none. Once per backend, then per node.
            nodeScript = LockScripts.RENEW_NODE_UNFLAGGED;
            LOG.log(
                    System.Logger.Level.INFO,
                    "Redis does not know script flags (before 7.0): renewing per node with the script without them");
            renewOnNode(anySlot, refused, report);
            return;
        }
        if (flagsUnknown) {
            crossSlotRenewal = false; // neither script compiles: one slot per call from now on
            LOG.log(
                    System.Logger.Level.INFO,
                    "Redis runs no per-node renewal script: renewing one slot per call from now on");
        }
        if (!refused.isEmpty()) {
            renewPerSlot(new ArrayList<>(refused), report);
        }
    }

    private void renewPerSlot(List<BackendLease> leases, RenewalReport report) {
        // One script call per slot (and batch), unless the client is known to talk to one server: a script may
        // touch one slot only on a cluster, and a generic UnifiedJedis may hide one. Standalone: one group, -1.
        boolean oneServer = commands instanceof RedisClient
                || commands instanceof StandaloneRedis
                || commands instanceof SentinelRedis;
        Map<Integer, List<RedisLease>> bySlot = new LinkedHashMap<>();
        for (BackendLease lease : leases) {
            RedisLease l = (RedisLease) lease;
            bySlot.computeIfAbsent(oneServer ? -1 : l.keys.slot(), s -> new ArrayList<>())
                    .add(l);
        }
        for (Map.Entry<Integer, List<RedisLease>> group : bySlot.entrySet()) {
            List<RedisLease> all = group.getValue();
            for (int from = 0; from < all.size(); from += RENEW_BATCH) {
                List<RedisLease> batch = all.subList(from, Math.min(all.size(), from + RENEW_BATCH));
                List<String> keys = new ArrayList<>(batch.size());
                List<String> args = new ArrayList<>(batch.size() + 1);
                args.add(leaseMillis);
                for (RedisLease l : batch) {
                    keys.add(l.keys.hash());
                    args.add(l.owner);
                }
                long sentAt = System.nanoTime();
                List<?> missing;
                try {
                    Object raw =
                            scriptOn(batch.get(0).keys.slot(), LockScripts.RENEW, LockScripts.RENEW_SHA, keys, args);
                    if (raw instanceof Replicated r && r.acknowledged() < settings.waitReplicas()) {
                        throw tooFewReplicas("a renewal", r.acknowledged());
                    }
                    missing = (List<?>) (raw instanceof Replicated r ? r.reply() : raw);
                } catch (LockBackendException e) {
                    // One unreachable node costs only its own leases: the others are renewed and reported.
                    batch.forEach(l -> report.unconfirmed(l, e));
                    continue;
                }
                Set<Integer> gone = new HashSet<>();
                for (Object index : missing) {
                    gone.add((int) asLong(index) - 1);
                }
                for (int i = 0; i < batch.size(); i++) {
                    if (gone.contains(i)) {
                        report.lost(batch.get(i), "no longer held in Redis (renewal refused)");
                    } else {
                        report.renewed(batch.get(i), sentAt);
                    }
                }
            }
        }
    }

    boolean renewOne(RedisLease lease) {
        List<?> missing = (List<?>) script(
                LockScripts.RENEW,
                LockScripts.RENEW_SHA,
                List.of(lease.keys.hash()),
                List.of(leaseMillis, lease.owner));
        return missing.isEmpty();
    }

    boolean release(RedisLease lease) {
        Object reply = script(
                LockScripts.RELEASE,
                LockScripts.RELEASE_SHA,
                List.of(lease.keys.hash(), lease.keys.wake()),
                List.of(lease.owner, wakeTtlMillis));
        return asLong(reply) == 1;
    }

    private void releaseOwner(LockKeys keys, String owner) {
        LockScripts.run(
                commands,
                LockScripts.RELEASE,
                LockScripts.RELEASE_SHA,
                List.of(keys.hash(), keys.wake()),
                List.of(owner, wakeTtlMillis));
    }

    /**
     * Runs a script on the command pool. A connection the server closed (CLIENT KILL, restart) fails at its next
     * use; every script is safe to send again (acquire re-grants to the same owner, renew re-extends, a release
     * recognizes its own earlier release by the record it leaves, see {@link LockScripts#RELEASE}), so the call is
     * retried once on a fresh connection after the pool's idle, equally dead, connections are dropped. A script
     * answered "not now" ({@link #isPassing}: {@code TRYAGAIN} while its slot is being migrated, {@code READONLY}
     * from a master just demoted, {@code CLUSTERDOWN} while a cluster elects a new master) is sent again with
     * back-off until the client follows the change, for up to {@value #TRY_AGAIN_MILLIS} ms.
     */
    private Object script(String script, String sha, List<String> keys, List<String> args) {
        return retryingPassingErrors(() -> runOnce(script, sha, keys, args));
    }

    /** Runs {@code call}, sending it again as {@link #script} describes while the server answers "not now". */
    private Object retryingPassingErrors(java.util.function.Supplier<Object> call) {
        long giveUpAt = 0; // read the clock only once a TRYAGAIN came: none on the usual path
        long backOffMillis = 5;
        while (true) {
            try {
                return call.get();
            } catch (LockBackendException e) {
                if (!(e.getCause() instanceof JedisDataException d && isPassing(d))) {
                    throw e;
                }
                followMaster();
                long now = System.nanoTime();
                if (giveUpAt == 0) {
                    giveUpAt = now + TimeUnit.MILLISECONDS.toNanos(TRY_AGAIN_MILLIS);
                } else if (now + TimeUnit.MILLISECONDS.toNanos(backOffMillis) - giveUpAt > 0) {
                    throw e;
                }
            }
            // No wake-up to wait for: Redis does not announce the end of a migration.
            sleepQuietly(backOffMillis);
            backOffMillis = Math.min(100, backOffMillis * 2);
        }
    }

    /** A script's reply, and how many replicas acknowledged its writes ({@code WAIT}). */
    private record Replicated(Object reply, long acknowledged) {}

    /**
     * {@link #script}, or, when the client waits for replicas, the script and {@code WAIT} pipelined on one
     * connection to the node of {@code slot}, giving a {@link Replicated}. The same retries apply.
     */
    private Object scriptOn(int slot, String script, String sha, List<String> keys, List<String> args) {
        if (settings.waitReplicas() == 0) {
            return script(script, sha, keys, args);
        }
        return retryingPassingErrors(() -> {
            try {
                return runReplicated(slot, script, sha, keys, args);
            } catch (JedisException e) {
                if (closedByServer(e)) {
                    connectionClosed(e);
                } else if (!(e instanceof JedisDataException)) {
                    followMaster();
                }
                throw failure("failed", e);
            }
        });
    }

    private Replicated runReplicated(int slot, String script, String sha, List<String> keys, List<String> args) {
        return LockScripts.uninterrupted(() -> {
            try (Connection c = connectionFor(slot)) {
                return withWait(c, () -> {
                    c.sendCommand(Protocol.Command.EVALSHA, scriptArguments(sha, keys, args));
                    c.sendCommand(Protocol.Command.WAIT, waitArguments());
                    List<Object> replies = c.getMany(2);
                    if (replies.get(0) instanceof JedisDataException d
                            && String.valueOf(d.getMessage()).startsWith("NOSCRIPT")) {
                        c.sendCommand(Protocol.Command.EVAL, scriptArguments(script, keys, args));
                        c.sendCommand(Protocol.Command.WAIT, waitArguments());
                        replies = c.getMany(2);
                    }
                    if (replies.get(0) instanceof JedisDataException d) {
                        throw d;
                    }
                    return new Replicated(replies.get(0), asLong(replies.get(1)));
                });
            }
        });
    }

    /** Runs {@code work} with the connection's read timeout raised by the {@code WAIT} timeout. */
    private <T> T withWait(Connection c, java.util.function.Supplier<T> work) {
        int timeout = c.getSoTimeout();
        c.setSoTimeout((int) Math.min(
                Integer.MAX_VALUE, timeout + settings.waitReplicasTimeout().toMillis()));
        try {
            return work.get();
        } finally {
            if (!c.isBroken()) {
                c.setSoTimeout(timeout);
            }
        }
    }

    private String[] waitArguments() {
        return new String[] {
            Integer.toString(settings.waitReplicas()),
            Long.toString(settings.waitReplicasTimeout().toMillis())
        };
    }

    private static String[] scriptArguments(String scriptOrSha, List<String> keys, List<String> args) {
        String[] a = new String[2 + keys.size() + args.size()];
        int i = 0;
        a[i++] = scriptOrSha;
        a[i++] = Integer.toString(keys.size());
        for (String k : keys) {
            a[i++] = k;
        }
        for (String v : args) {
            a[i++] = v;
        }
        return a;
    }

    /** A connection to the server of {@code slot} (any slot when not a cluster). */
    @SuppressWarnings("deprecation") // JedisCluster, see WaitConnections.nodePools
    private Connection connectionFor(int slot) {
        if (commands instanceof RedisClient rc) {
            return rc.getPool().getResource();
        }
        if (commands instanceof StandaloneRedis s) {
            return s.pool().getResource();
        }
        if (commands instanceof SentinelRedis sr) {
            return sr.pool().getResource();
        }
        if (commands instanceof JedisCluster jc) {
            return jc.getConnectionFromSlot(slot);
        }
        return ((RedisClusterClient) commands).getConnectionFromSlot(slot);
    }

    private LockBackendException tooFewReplicas(String what, long acknowledged) {
        return new LockBackendException("Redis at " + settings.address() + ": only " + acknowledged + " of "
                + settings.waitReplicas() + " replicas acknowledged " + what + " within "
                + settings.waitReplicasTimeout().toMillis() + " ms (waitReplicas)");
    }

    private Object runOnce(String script, String sha, List<String> keys, List<String> args) {
        try {
            return LockScripts.run(commands, script, sha, keys, args);
        } catch (JedisException e) {
            if (!closedByServer(e)) {
                if (!(e instanceof JedisDataException) && followMaster()) {
                    // Sentinel: the master refused or dropped the connection and the sentinels name another one.
                    try {
                        return LockScripts.run(commands, script, sha, keys, args);
                    } catch (JedisException again) {
                        throw failure("failed", again);
                    }
                }
                throw failure("failed", e);
            }
            followMaster();
            connectionClosed(e);
            try {
                return LockScripts.run(commands, script, sha, keys, args);
            } catch (JedisException again) {
                throw failure("failed", again);
            }
        }
    }

    /**
     * An error reply that passes once the servers have settled: {@code TRYAGAIN} (a multi-key command on a slot
     * being migrated), {@code READONLY} (a write sent to a master that was just made a replica, before the client
     * follows the new one), {@code UNBLOCKED} (a blocked {@code BLPOP} ended because its master became a replica),
     * {@code CLUSTERDOWN} (a cluster without a master for some slot, as during an election), {@code MASTERDOWN} and
     * {@code LOADING}. A script answered so did not run its writes.
     */
    static boolean isPassing(JedisDataException e) {
        String m = String.valueOf(e.getMessage());
        return m.startsWith("TRYAGAIN")
                || m.startsWith("READONLY")
                || m.startsWith("UNBLOCKED")
                || m.startsWith("CLUSTERDOWN")
                || m.startsWith("MASTERDOWN")
                || m.startsWith("LOADING");
    }

    /**
     * On a Sentinel-managed master, asks the sentinels where the master is now (at most every 100 ms) and moves
     * the pools there; on other servers does nothing.
     *
     * @return whether a pool moved to another master
     */
    private boolean followMaster() {
        boolean moved = commands instanceof SentinelRedis c && c.follow();
        if (waits != commands && waits instanceof SentinelRedis w && w.follow()) {
            moved = true;
        }
        return moved;
    }

    /**
     * Whether a waiting request whose attempt failed with {@code e} should look again after a back-off: the server
     * answered that it is failing over (see {@link #isPassing}) and the deadline leaves time.
     */
    private static boolean waitOutFailover(AcquireRequest request, RuntimeException e) {
        if (request.isTry() || request.isCancelled() || !(e.getCause() instanceof JedisDataException d)) {
            return false;
        }
        long left = request.remainingNanos();
        if (!isPassing(d) || left <= 0) {
            return false;
        }
        sleepQuietly(Math.max(1, Math.min(FAILOVER_BACK_OFF_MILLIS, TimeUnit.NANOSECONDS.toMillis(left))));
        return true;
    }

    /** Sleeps for a back-off; an interrupt ends the sleep and stays set. */
    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Whether the server closed the connection (end of stream, reset), as opposed to not answering in time or not
     * accepting connections: only the former means this client's session with Redis ended.
     */
    static boolean closedByServer(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.net.SocketTimeoutException || t instanceof java.net.ConnectException) {
                return false;
            }
            String message = String.valueOf(t.getMessage());
            if (t instanceof JedisConnectionException && message.contains("Unexpected end of stream")) {
                return true;
            }
            if (t instanceof java.net.SocketException
                    && (message.contains("reset") || message.contains("Broken pipe") || message.contains("closed"))) {
                return true;
            }
            for (Throwable s : t.getSuppressed()) {
                if (closedByServer(s)) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * The server closed a connection (CLIENT KILL, an idle timeout, a restart): the pool's idle connections are as
     * dead. Leases do not depend on connections: a lease that did not survive (a restart lost its hash) is refused
     * at its next renewal and reported lost then, so nothing is reported lost here.
     */
    private void connectionClosed(Throwable e) {
        LOG.log(
                System.Logger.Level.INFO,
                "Redis at " + settings.address() + " closed a connection of this lock client (" + e.getMessage()
                        + "); retrying on a fresh connection");
        dropIdleConnections(commands);
        if (waits != commands) {
            dropIdleConnections(waits);
        }
    }

    private static void dropIdleConnections(UnifiedJedis client) {
        try {
            WaitConnections.nodePools(client, "").values().forEach(Pool::clear);
        } catch (RuntimeException ignored) {
            // best effort: a dead connection left in the pool fails once more and is dropped then
        }
    }

    private LockBackendException failure(String what, Exception e) {
        return new LockBackendException("Redis at " + settings.address() + " " + what + ": " + e.getMessage(), e);
    }

    static long asLong(Object reply) {
        if (reply instanceof Long l) {
            return l;
        }
        if (reply instanceof byte[] b) {
            return Long.parseLong(new String(b, java.nio.charset.StandardCharsets.US_ASCII));
        }
        if (reply instanceof String s) {
            return Long.parseLong(s);
        }
        throw new LockBackendException("Unexpected reply from a Redis lock script: " + reply);
    }

    @Override
    public void close() {
        canceller.shutdown();
        renewThreads.shutdown();
        for (AutoCloseable c : owned) {
            try {
                c.close();
            } catch (Exception e) {
                LOG.log(System.Logger.Level.WARNING, "Closing a Redis client failed", e);
            }
        }
    }

    @Override
    public String toString() {
        return "RedisLockBackend[" + settings.address() + ", prefix=" + settings.prefix() + "]";
    }

    /**
     * One thread waiting for one key. {@code BLPOP} ignores {@link Thread#interrupt()}, so a cancelled waiter is
     * unblocked by a signal pushed to its own cancel list, which it blocks on together with the wake-up list. The
     * state machine makes sure a signal is pushed only while the waiter blocks, and that the waiter deletes a signal
     * it did not consume: an interrupted or timed-out waiter leaves nothing in Redis.
     */
    private final class Waiter {
        private static final int IDLE = 0;
        private static final int BLOCKING = 1;
        private static final int SIGNALLING = 2;
        private static final int CANCELLED = 3;
        /** The waiter returned while its signal was being sent: the sender deletes the signal if it was not taken. */
        private static final int LEFT = 4;

        private final LockKeys keys;
        private final AcquireRequest request;
        private final String cancelKey;
        private final AtomicInteger state = new AtomicInteger(IDLE);
        /** Set by the cancel action once its signal is in Redis. */
        private volatile boolean signalled;
        /** Set by the waiter when BLPOP returned the signal, which removed it (a list of one element vanishes). */
        private volatile boolean signalConsumed;
        /** The waiting thread's interrupt status, set aside while an uninterruptible request blocks. */
        private boolean interruptSet;

        Waiter(LockKeys keys, AcquireRequest request) {
            this.keys = keys;
            this.request = request;
            this.cancelKey = keys.cancel(request.ownerId());
        }

        /** Blocks until a wake-up, the timeout, or cancellation; true if it consumed a wake-up. */
        boolean await(long timeoutNanos) throws InterruptedException {
            long deadline = System.nanoTime() + timeoutNanos;
            if (!blockingPermits.tryAcquire()) {
                if (overflowLogged.compareAndSet(false, true)) {
                    LOG.log(
                            System.Logger.Level.WARNING,
                            "More threads wait for Redis locks than may block on a connection ("
                                    + blockingLimit
                                    + "); the others queue locally and are woken later. Raise waitPoolSize (or give"
                                    + " RedisLocks a separate waitClient with a larger pool).");
                }
                // Queue locally, woken by a permit given back or by the request's cancellation (its cancel action),
                // never by a timer: ten thousand queued waiters cost nothing while nothing happens.
                if (!blockingPermits.acquire(request, deadline - System.nanoTime())) {
                    return false;
                }
                // The key may have been released while this thread queued, its wake-up taken by nobody: look at it
                // again before blocking.
                blockingPermits.release();
                return false;
            }
            try {
                long left = deadline - System.nanoTime();
                // BLPOP's timeout 0 means forever; below a millisecond it is not worth a round trip.
                if (left < TimeUnit.MILLISECONDS.toNanos(1) || !state.compareAndSet(IDLE, BLOCKING)) {
                    return false;
                }
                if (request.isCancelled()) {
                    state.compareAndSet(BLOCKING, IDLE);
                    return false;
                }
                if (Thread.interrupted()) {
                    // A virtual thread's socket closes when it does I/O with the status set. An interruptible request
                    // is cancelled by the status (above), so this is Lock.lock(): it waits on and gets it back at the
                    // end.
                    interruptSet = true;
                }
                String popped;
                try {
                    popped = waitConnections.blpop(keys, cancelKey, TimeUnit.NANOSECONDS.toMillis(left));
                } catch (JedisRedirectionException e) {
                    // The slot moved (resharding, failover): the BLPOP went, on a raw connection, to the old node.
                    // A keyed command through the client follows the redirect and refreshes its slot map; then the
                    // waiter looks at the lock again and blocks on the new node.
                    state.compareAndSet(BLOCKING, IDLE);
                    try {
                        LockScripts.uninterrupted(() -> waits.exists(keys.wake()));
                    } catch (JedisException refresh) {
                        throw failure("failed while waiting", refresh);
                    }
                    return false;
                } catch (JedisException e) {
                    state.compareAndSet(BLOCKING, IDLE);
                    if (e instanceof JedisDataException d && isPassing(d)) {
                        // UNBLOCKED (the master became a replica), CLUSTERDOWN, ...: look again once the client
                        // follows the new master, within the deadline.
                        followMaster();
                        long ms = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                        sleepQuietly(Math.max(1, Math.min(FAILOVER_BACK_OFF_MILLIS, ms)));
                        return false;
                    }
                    if (Thread.currentThread().isInterrupted()) {
                        // Interrupted in BLPOP on a virtual thread, whose socket the interrupt closed (a platform
                        // thread's BLPOP ignores interrupts and is ended by the cancel signal instead): the request
                        // is cancelled now, or for Lock.lock() the status is kept for the end and the wait goes on.
                        if (!request.isInterruptible()) {
                            Thread.interrupted();
                            interruptSet = true;
                        }
                        return false;
                    }
                    if (closedByServer(e)) {
                        // The wait connection was killed: look at the lock again on a fresh one.
                        followMaster();
                        dropIdleConnections(waits);
                        return false;
                    }
                    throw failure("failed while waiting", e);
                }
                state.compareAndSet(BLOCKING, IDLE);
                if (cancelKey.equals(popped)) {
                    signalConsumed = true;
                }
                return keys.wake().equals(popped);
            } finally {
                blockingPermits.release();
            }
        }

        /** The core's cancel action: unblocks the BLPOP if the waiter is in it. Never blocks the caller. */
        void cancel() {
            if (state.compareAndSet(BLOCKING, SIGNALLING)) {
                try {
                    canceller.execute(this::sendSignal);
                } catch (RejectedExecutionException closing) {
                    // Only when the client is closing: the waiter wakes at its BLPOP timeout.
                    state.set(CANCELLED);
                }
            } else {
                state.compareAndSet(IDLE, CANCELLED);
            }
        }

        private void sendSignal() {
            boolean pushed = false;
            try {
                LockScripts.run(
                        commands,
                        LockScripts.SIGNAL,
                        LockScripts.SIGNAL_SHA,
                        List.of(cancelKey),
                        List.of(wakeTtlMillis));
                pushed = true;
                signalled = true;
            } catch (RuntimeException e) {
                // The waiter wakes at its BLPOP timeout instead, at most the deadline or the holder's lease.
                LOG.log(System.Logger.Level.DEBUG, "Could not signal a cancelled Redis lock waiter", e);
            } finally {
                if (!state.compareAndSet(SIGNALLING, CANCELLED) && pushed && !signalConsumed) {
                    // LEFT: the waiter returned meanwhile without taking the signal, and did not wait for it.
                    deleteSignal();
                }
            }
        }

        void passWakeUp() {
            try {
                LockScripts.run(
                        commands,
                        LockScripts.PASS_WAKEUP,
                        LockScripts.PASS_WAKEUP_SHA,
                        List.of(keys.hash(), keys.wake()),
                        List.of(wakeTtlMillis));
            } catch (JedisException e) {
                // Other waiters then wake at their holder's lease end at the latest.
                LOG.log(System.Logger.Level.DEBUG, "Could not pass on a Redis lock wake-up", e);
            }
        }

        /**
         * Deletes a cancel signal that was pushed but not consumed, so a cancelled waiter leaves nothing behind.
         * Never waits for a signal still being sent (on a stalled server that takes up to {@code timeoutMs}, in turn
         * through the few sender threads): its sender deletes it then.
         */
        void cleanUp() {
            if (state.compareAndSet(SIGNALLING, LEFT)) {
                return;
            }
            if (signalled && !signalConsumed) {
                deleteSignal();
            }
        }

        private void deleteSignal() {
            try {
                LockScripts.uninterrupted(() -> commands.del(cancelKey));
            } catch (JedisException e) {
                LOG.log(System.Logger.Level.DEBUG, "Could not delete a Redis lock cancel signal; it expires", e);
            }
        }
    }
}
