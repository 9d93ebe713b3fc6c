package org.locksmith.lock.redis;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;
import org.locksmith.lock.redis.internal.EvictionGuard;
import org.locksmith.lock.redis.internal.RedisLockBackend;
import org.locksmith.lock.redis.internal.RedisSettings;
import redis.clients.jedis.UnifiedJedis;

/**
 * Lock clients on a Jedis client the application already has, standalone ({@code RedisClient}, {@code UnifiedJedis})
 * or cluster ({@code RedisClusterClient}, {@code JedisCluster}). For URLs, use {@link Locks#open(String)} with a
 * {@code redis://} URL instead (see {@link RedisLockProvider}).
 *
 * <pre>{@code
 * try (LockClient locks = RedisLocks.using(jedis)) {
 *     try (LockLease lease = locks.lock("orders:42").acquire(Duration.ofSeconds(5))) { ... }
 * }
 * }</pre>
 *
 * <p>The application keeps ownership of its Jedis clients: closing the {@link LockClient} does not close them
 * (unless {@link Builder#closeClients} says so).
 *
 * <p>A waiter blocks one connection in {@code BLPOP} for as long as it waits. With one client, waiters and short
 * commands share its pool, so at most half of that pool (and at most {@link Builder#maxBlockingWaiters}) blocks at
 * once, whatever the number of waiting threads: releases, renewals and the application keep the other half; the
 * other waiters queue locally. Better, give waiters their own client with {@link Builder#waitClient}, which they may
 * fill up to its pool size. Waits need a client that exposes its pool ({@code RedisClient}, {@code
 * RedisClusterClient} or {@code JedisCluster}), because each {@code BLPOP} gets a socket timeout of its own so that a
 * dead server fails a waiter by its deadline plus the connection's command timeout.
 */
public final class RedisLocks {
    private RedisLocks() {}

    /**
     * A lock client on {@code jedis} with the default settings (lease 30 s, prefix {@code locksmith:}, at most 16
     * threads blocked in {@code BLPOP} at once). Checks that the server answers.
     *
     * @throws NullPointerException if jedis is null
     * @throws org.locksmith.lock.LockBackendException if the server does not answer
     */
    public static LockClient using(UnifiedJedis jedis) {
        return builder().build(jedis);
    }

    /**
     * What opening a client does when Redis may evict lock keys: {@code maxmemory} is set and {@code
     * maxmemory-policy} is not {@code noeviction}. Every lock hash has an expiry, so {@code volatile-*} policies
     * evict it as readily as {@code allkeys-*}: an evicted hash frees the lock for another owner while its holder
     * still sees {@code isValid()} true until its next renewal.
     */
    public enum EvictionCheck {
        /** Log a warning naming the setting (the default). */
        WARN,
        /** Refuse to open, with a {@link org.locksmith.lock.LockBackendException} naming the setting. */
        REFUSE,
        /** Do not look (for servers that refuse {@code CONFIG GET}, such as some managed services). */
        IGNORE
    }

    /** A builder for the rarer settings. */
    public static Builder builder() {
        return new Builder();
    }

    /** Settings of a Redis lock client built on application-owned Jedis clients. Not thread-safe. */
    public static final class Builder {
        private Duration leaseTime = RedisSettings.DEFAULT_LEASE;
        private String prefix = RedisSettings.DEFAULT_PREFIX;
        private int maxBlockingWaiters = RedisSettings.DEFAULT_WAIT_POOL_SIZE;
        private UnifiedJedis waitClient;
        private String address = "a Jedis client given by the application";
        private boolean closeClients;
        private EvictionCheck evictionCheck = EvictionCheck.WARN;
        private Duration restartHoldOff;
        private int waitReplicas;
        private Duration waitReplicasTimeout = RedisSettings.DEFAULT_WAIT_REPLICAS_TIMEOUT;

        private Builder() {}

        /**
         * Makes grants and renewals count only once {@code replicas} replicas acknowledged them ({@code WAIT
         * replicas timeout} on the connection of the script, pipelined with it: no extra round trip, plus the time
         * the replicas take). A grant fewer replicas acknowledged within {@code timeout} is released and the acquire
         * fails with {@link org.locksmith.lock.LockBackendException}; such a renewal does not extend the lease. This
         * narrows, but does not close, the window in which a failover loses a grant (see the module README). Default:
         * 0, no waiting. {@code timeout}: 1 ms to a third of the lease time (default 200 ms).
         */
        public Builder waitForReplicas(int replicas, Duration timeout) {
            this.waitReplicas = replicas;
            this.waitReplicasTimeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /**
         * How long Redis keeps a lease without renewal (100 ms to 1 day; default 30 s). Held leases are renewed every
         * third of it; a crashed holder's lock frees after at most this long.
         */
        public Builder leaseTime(Duration leaseTime) {
            this.leaseTime = Objects.requireNonNull(leaseTime, "leaseTime");
            return this;
        }

        /**
         * How long after a Redis server starts it grants no lock (default: the lease time; zero turns it off). A
         * server that restarts without its data (no persistence, or writes lost in the crash) has forgotten the
         * locks it granted, and their holders may believe they hold for up to their lease time; set it to the
         * longest lease time of any client of the server. Turn it off only if every write a grant makes survives a
         * restart ({@code appendonly yes} with {@code appendfsync always}).
         */
        public Builder restartHoldOff(Duration restartHoldOff) {
            this.restartHoldOff = Objects.requireNonNull(restartHoldOff, "restartHoldOff");
            return this;
        }

        /** The prefix of every key written (default {@code locksmith:}); must not contain braces. */
        public Builder prefix(String prefix) {
            this.prefix = RedisSettings.validatePrefix(prefix);
            return this;
        }

        /**
         * How many threads may block in {@code BLPOP} at once (default 16); more waiters queue locally and are
         * admitted as others finish. Capped at the wait client's pool size, or at half the pool when waits share the
         * main client.
         */
        public Builder maxBlockingWaiters(int maxBlockingWaiters) {
            this.maxBlockingWaiters = maxBlockingWaiters;
            return this;
        }

        /**
         * A separate client (same server or cluster) for blocking waits, so that waiters never hold connections
         * that releases and renewals need. Without one, waits use the main client. Not closed by the lock client.
         */
        public Builder waitClient(UnifiedJedis waitClient) {
            this.waitClient = Objects.requireNonNull(waitClient, "waitClient");
            return this;
        }

        /**
         * Whether closing the lock client also closes the Jedis clients given to {@link #build} and {@link
         * #waitClient} (default false: the application owns them).
         */
        public Builder closeClients(boolean closeClients) {
            this.closeClients = closeClients;
            return this;
        }

        /** What to do if the server may evict lock keys (default {@link EvictionCheck#WARN}). */
        public Builder evictionCheck(EvictionCheck evictionCheck) {
            this.evictionCheck = Objects.requireNonNull(evictionCheck, "evictionCheck");
            return this;
        }

        /** A description of the server for error messages, such as {@code redis-1.internal:6379}. */
        public Builder address(String address) {
            this.address = Objects.requireNonNull(address, "address");
            return this;
        }

        /**
         * Builds a lock client on {@code jedis}, checking that the server answers.
         *
         * @throws IllegalArgumentException if a setting is out of range, if the client that waits (the {@link
         *     #waitClient}, else {@code jedis}) is not a {@code RedisClient}, {@code RedisClusterClient} or {@code
         *     JedisCluster}, or if waits share a pool of a single connection with the short commands
         * @throws org.locksmith.lock.LockBackendException if the server does not answer, or may evict lock keys and
         *     the {@link #evictionCheck} is {@link EvictionCheck#REFUSE}
         */
        public LockClient build(UnifiedJedis jedis) {
            Objects.requireNonNull(jedis, "jedis");
            RedisSettings settings = new RedisSettings(
                    leaseTime,
                    prefix,
                    maxBlockingWaiters,
                    address,
                    restartHoldOff == null ? leaseTime : restartHoldOff,
                    waitReplicas,
                    waitReplicasTimeout);
            UnifiedJedis waits = waitClient == null ? jedis : waitClient;
            List<AutoCloseable> owned =
                    !closeClients ? List.of() : waits == jedis ? List.of(jedis) : List.of(jedis, waits);
            RedisLockBackend backend = new RedisLockBackend(jedis, waits, owned, settings);
            try {
                backend.verify(EvictionGuard.Mode.valueOf(evictionCheck.name()));
            } catch (RuntimeException e) {
                backend.close();
                throw e;
            }
            return Locks.client(backend);
        }
    }
}
