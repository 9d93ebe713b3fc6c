package org.locksmith.lock.redis.internal;

import static org.locksmith.lock.redis.internal.RedisFailures.asLong;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.LockBackend;
import org.locksmith.lock.spi.RenewalReport;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisException;

/**
 * The Redis backend: a hash per key with a {@code PEXPIRE} lease, changed only by {@link LockScripts}; waiters block
 * in {@code BLPOP} on a per-key wake-up list that a contended release pushes one element to.
 *
 * <p>It implements the SPI and delegates the rest: {@link RedisTopology} (standalone, Sentinel or Cluster),
 * {@link ScriptRunner} (scripts, retries and error mapping), {@link Grants} (the acquire script call and the release),
 * {@link Renewal} (the renewal rounds), {@link WaitRoom} and {@link Waiter} (waiting in {@code BLPOP}),
 * {@link EvictionGuard} (the check at open).
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
    /** {@link #attempt}'s answer when the server is failing over and the request should look again. */
    private static final List<?> LOOK_AGAIN = List.of();

    private final RedisTopology commands;
    private final RedisTopology waits;
    private final List<AutoCloseable> owned;
    private final RedisSettings settings;
    private final ScriptRunner scripts;
    private final Grants grants;
    private final Renewal renewal;
    private final WaitRoom waitRoom;

    /**
     * @param commands the client for short commands
     * @param waits the client for blocking waits (may be {@code commands} when the application gave one client)
     * @param owned the clients this backend closes on {@link #close()} (none when the application owns them)
     */
    public RedisLockBackend(
            UnifiedJedis commands, UnifiedJedis waits, List<AutoCloseable> owned, RedisSettings settings) {
        this.commands = RedisTopology.of(commands);
        this.waits = waits == commands ? this.commands : RedisTopology.of(waits);
        this.owned = List.copyOf(owned);
        if (settings.waitReplicas() > 0 && !this.commands.pipelinesScripts()) {
            throw new IllegalArgumentException("Waiting for replicas sends WAIT on the connection of each grant and"
                    + " renewal, which needs a RedisClient, RedisClusterClient or JedisCluster, not "
                    + commands.getClass().getName());
        }
        this.settings = settings;
        this.scripts = new ScriptRunner(this.commands, this.waits, settings);
        this.waitRoom = new WaitRoom(this.commands, this.waits, scripts, settings);
        this.grants = new Grants(scripts, settings, waitRoom.canceller);
        this.renewal = new Renewal(this.commands, scripts, settings);
    }

    /** How many threads may block in {@code BLPOP} at once (see {@code WaitRoom.blockingPermits}), for tests and tools. */
    public int maxBlockingWaiters() {
        return waitRoom.blockingLimit;
    }

    /**
     * Checks that the store answers (and, on standalone servers, loads the scripts) so a bad URL fails at open, and
     * whether it may evict lock keys ({@link EvictionGuard}).
     */
    public void verify(EvictionGuard.Mode evictionCheck) {
        UnifiedJedis client = commands.client();
        try {
            if (commands.isCluster()) {
                client.exists(LockKeys.of(settings.prefix(), "ping").hash());
            } else {
                client.ping();
                for (String script : LockScripts.all()) {
                    client.scriptLoad(script);
                }
                if (waits != commands) {
                    waits.client().ping();
                }
            }
        } catch (JedisException e) {
            throw scripts.failure("is not reachable or refused the connection", e);
        }
        EvictionGuard.check(commands, settings.address(), evictionCheck);
    }

    @Override
    public String name() {
        return commands.isCluster() ? "redis-cluster" : "redis";
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
                long sentAt = System.nanoTime();
                List<?> reply = attempt(keys, request, willWait, waiter != null);
                if (reply == null) {
                    return null; // the deadline passed while queued for the attempt
                }
                if (reply == LOOK_AGAIN) {
                    continue; // a failover: the client follows the new master meanwhile
                }
                holdsWakeUp = false;
                long value = asLong(reply.get(1));
                if (asLong(reply.get(0)) == 1) {
                    return new RedisLease(this, keys, request, value, sentAt);
                }
                if (reply.size() > 2) {
                    request.refusedBecause(grants.holdOffRefusal(asLong(reply.get(2))));
                }
                long remaining = request.remainingNanos();
                if (request.isTry() || remaining <= 0 || request.isCancelled()) {
                    return null;
                }
                if (waiter == null) {
                    waiter = waitRoom.waiter(keys, request);
                    request.onCancel(waiter::cancel);
                }
                holdsWakeUp = waiter.await(Math.min(remaining, Waiter.waitCapNanos(value, settings.leaseTime())));
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
                if (waiter.interruptSet()) {
                    // An uninterruptible wait (Lock.lock()) set the status aside to block again: the caller gets it.
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /**
     * One attempt of {@link #acquire}: the acquire script's reply, null if a waiting request's deadline passed while
     * it queued for its turn, or {@link #LOOK_AGAIN} if the server is failing over and the request should look again.
     */
    private List<?> attempt(LockKeys keys, AcquireRequest request, boolean willWait, boolean waited)
            throws InterruptedException {
        // A waiting acquire queues here for its attempt, until its deadline, rather than in the connection
        // pool, whose borrow gives up after the client's timeout (a try does not queue: it uses the pool).
        if (!request.isTry() && !waitRoom.attemptPermits.acquire(request, request.remainingNanos())) {
            return null;
        }
        LockBackendException failed;
        try {
            return grants.attempt(keys, request, willWait, waited);
        } catch (LockBackendException e) {
            failed = e;
        } finally {
            if (!request.isTry()) {
                waitRoom.attemptPermits.release();
            }
        }
        if (RedisFailures.waitOutFailover(request, failed)) {
            return LOOK_AGAIN; // the client follows the new master meanwhile
        }
        throw failed;
    }

    @Override
    public void renew(List<BackendLease> leases, RenewalReport report) {
        renewal.renew(leases, report);
    }

    boolean renewOne(RedisLease lease) {
        return renewal.renewOne(lease);
    }

    boolean release(RedisLease lease) {
        return grants.release(lease);
    }

    @Override
    public void close() {
        waitRoom.close();
        renewal.close();
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
}
