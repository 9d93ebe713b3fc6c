package org.locksmith.lock.redis.internal;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import redis.clients.jedis.Connection;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.RedisSentinelClient;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.util.Pool;

/**
 * What kind of Redis deployment a Jedis client talks to, and everything the backend does differently for each: one
 * server, a Sentinel-managed master (followed by this module's {@link SentinelRedis}, or by an application's Jedis
 * {@code RedisSentinelClient}), a Redis Cluster, or a client whose connections this module cannot see. It is the only
 * place that looks at a client's class ({@link #of}); the rest of the backend asks the topology.
 *
 * <p>Contract: every method is cheap and thread-safe; {@link #connection(int)} lends a connection that the caller
 * closes (which gives it back to its pool).
 */
sealed interface RedisTopology
        permits RedisTopology.SingleServer,
                RedisTopology.SentinelMaster,
                RedisTopology.SentinelClient,
                RedisTopology.Cluster,
                RedisTopology.Unpooled {

    /** The topology of {@code client}. */
    @SuppressWarnings("deprecation") // JedisCluster: deprecated in Jedis 8 but what many applications still hand us
    static RedisTopology of(UnifiedJedis client) {
        if (client instanceof RedisClient rc) {
            return new SingleServer(client, rc.getPool());
        }
        if (client instanceof StandaloneRedis s) {
            return new SingleServer(client, s.pool());
        }
        if (client instanceof SentinelRedis sr) {
            return new SentinelMaster(sr);
        }
        if (client instanceof RedisSentinelClient sc) {
            return new SentinelClient(sc);
        }
        if (client instanceof JedisCluster jc) {
            return new Cluster(client, jc::getConnectionFromSlot, jc::getClusterNodes);
        }
        if (client instanceof RedisClusterClient rcc) {
            return new Cluster(client, rcc::getConnectionFromSlot, rcc::getClusterNodes);
        }
        return new Unpooled(client);
    }

    /** The client itself. */
    UnifiedJedis client();

    /** Whether keys live on many nodes by slot (Redis Cluster). */
    default boolean isCluster() {
        return false;
    }

    /**
     * Whether every key is known to live on one server, so that one script call may touch keys of any slot. False
     * for a cluster, and for clients that may hide one.
     */
    default boolean isOneServer() {
        return false;
    }

    /**
     * Whether {@link #connection(int)} serves the backend's own pipelines (a script and {@code WAIT} on one
     * connection, for {@code waitReplicas}).
     */
    default boolean pipelinesScripts() {
        return true;
    }

    /** Whether {@link #connection(int)} serves waiters, each of which times out its own {@code BLPOP}. */
    default boolean lendsConnections() {
        return true;
    }

    /**
     * The connection pools by node address: each node pool of a cluster, the current master's pool of a Sentinel
     * client, or the one pool of a single server under {@code address}; empty for a client without visible pools.
     */
    Map<String, Pool<Connection>> nodePools(String address);

    /**
     * The object whose connections waiters block: the one pool of a single server, else the client (a cluster's
     * node pools, or a Sentinel client whose pool is replaced when the master changes).
     */
    default Object poolIdentity() {
        return client();
    }

    /**
     * A connection to the server of {@code slot} (any slot when there is one server), taken from the client's pool.
     *
     * @throws JedisConnectionException if a Sentinel client's pool was replaced under the call (a failover)
     */
    Connection connection(int slot);

    /**
     * On a Sentinel-managed master followed by {@link SentinelRedis}, asks the sentinels where the master is now (at
     * most every 100 ms) and moves the pool there; elsewhere does nothing.
     *
     * @return whether the pool moved to another master
     */
    default boolean followMaster() {
        return false;
    }

    /**
     * The most connections one pool opens to one node ({@code Integer.MAX_VALUE} if unbounded or unknown): on a
     * cluster, the smallest of its node pools, since every waiter may wait on the same node.
     */
    default int poolCapacity() {
        int capacity = Integer.MAX_VALUE;
        for (Pool<Connection> pool : nodePools("").values()) {
            int max = pool.getMaxTotal();
            capacity = Math.min(capacity, max < 0 ? Integer.MAX_VALUE : max);
        }
        return capacity;
    }

    /** Drops the idle connections of every pool (after the server closed one: the others are as dead). */
    default void dropIdleConnections() {
        try {
            nodePools("").values().forEach(Pool::clear);
        } catch (RuntimeException ignored) {
            // best effort: a dead connection left in the pool fails once more and is dropped then
        }
    }

    /** One server behind one pool: Jedis's {@code RedisClient}, or this module's {@link StandaloneRedis}. */
    record SingleServer(UnifiedJedis client, Pool<Connection> pool) implements RedisTopology {
        @Override
        public boolean isOneServer() {
            return true;
        }

        @Override
        public Map<String, Pool<Connection>> nodePools(String address) {
            Map<String, Pool<Connection>> pools = new LinkedHashMap<>();
            pools.put(address, pool);
            return pools;
        }

        @Override
        public Object poolIdentity() {
            return pool;
        }

        @Override
        public Connection connection(int slot) {
            return pool.getResource();
        }
    }

    /** A Sentinel-managed master followed by this module's {@link SentinelRedis}. */
    record SentinelMaster(SentinelRedis client) implements RedisTopology {
        @Override
        public boolean isOneServer() {
            return true;
        }

        @Override
        public Map<String, Pool<Connection>> nodePools(String address) {
            Map<String, Pool<Connection>> pools = new LinkedHashMap<>();
            pools.put(client.master().toString(), client.pool());
            return pools;
        }

        @Override
        public Connection connection(int slot) {
            try {
                return client.pool().getResource();
            } catch (IllegalStateException closed) {
                throw new JedisConnectionException("the master's pool was replaced (failover): " + closed, closed);
            }
        }

        @Override
        public boolean followMaster() {
            return client.follow();
        }
    }

    /**
     * A Sentinel-managed master followed by an application's Jedis {@code RedisSentinelClient}: waiters may use it,
     * but scripts are not pipelined with {@code WAIT} on it.
     */
    record SentinelClient(RedisSentinelClient client) implements RedisTopology {
        @Override
        public boolean pipelinesScripts() {
            return false;
        }

        @Override
        public Map<String, Pool<Connection>> nodePools(String address) {
            Map<String, Pool<Connection>> pools = new LinkedHashMap<>();
            client.getPrimaryNodesConnectionMap().forEach((node, pool) -> pools.put(String.valueOf(node), pool));
            return pools;
        }

        /** Its pool is replaced when the master changes; one closed under this call fails like a broken connection. */
        @Override
        public Connection connection(int slot) {
            for (Pool<Connection> pool : client.getPrimaryNodesConnectionMap().values()) {
                try {
                    return pool.getResource();
                } catch (IllegalStateException closed) {
                    throw new JedisConnectionException("the master's pool was replaced (failover): " + closed, closed);
                }
            }
            throw new JedisConnectionException("the Sentinel client knows no master");
        }
    }

    /** A Redis Cluster ({@code RedisClusterClient} or {@code JedisCluster}): a pool per node, keys by slot. */
    record Cluster(
            UnifiedJedis client,
            IntFunction<Connection> bySlot,
            Supplier<Map<String, ? extends Pool<Connection>>> nodes)
            implements RedisTopology {
        @Override
        public boolean isCluster() {
            return true;
        }

        @Override
        public Map<String, Pool<Connection>> nodePools(String address) {
            return new LinkedHashMap<>(nodes.get());
        }

        @Override
        public Connection connection(int slot) {
            return bySlot.apply(slot);
        }
    }

    /**
     * Any other {@code UnifiedJedis}: short commands only, through the client. Its connections are not visible, so
     * it neither serves waiters nor pipelines scripts with {@code WAIT}.
     */
    record Unpooled(UnifiedJedis client) implements RedisTopology {
        @Override
        public boolean pipelinesScripts() {
            return false;
        }

        @Override
        public boolean lendsConnections() {
            return false;
        }

        @Override
        public Map<String, Pool<Connection>> nodePools(String address) {
            return new LinkedHashMap<>();
        }

        @Override
        public Connection connection(int slot) {
            throw new IllegalStateException("a " + client.getClass().getName() + " lends no connection");
        }
    }
}
