package org.locksmith.lock.redis.internal;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import redis.clients.jedis.Connection;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.RedisSentinelClient;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.util.Pool;

/**
 * Where a waiter gets the connection for one {@code BLPOP}, and how many waiters a client's pool can carry.
 *
 * <p>Jedis sends a blocking command with the client's "blocking socket timeout", which is infinite by default: a
 * server that stops answering (SIGSTOP, partition) would hang the waiter for ever, past its deadline and past any
 * cancel signal (which cannot reach that server either). So the {@code BLPOP} is sent here on a connection taken from
 * the client's pool, as an ordinary command whose socket timeout is set, for this one call, to the {@code BLPOP}'s own
 * timeout plus the connection's command timeout plus {@value #BLPOP_LATENESS_MILLIS} ms for a server tick: a dead
 * server fails the waiter at most that slack after the timeout.
 */
final class WaitConnections {
    /** Slack used when the application's connections have no read timeout at all (0 = infinite in Jedis). */
    static final int DEFAULT_SLACK_MILLIS = 2_000;
    /**
     * How late a healthy server may answer a {@code BLPOP} whose timeout passed: it looks at blocked clients once per
     * server tick (100 ms at the default {@code hz 10}). Added to the socket timeout, so that a command timeout below
     * a tick does not fail healthy waits.
     */
    static final int BLPOP_LATENESS_MILLIS = 250;

    private final UnifiedJedis client;
    private final Executor closer;

    /**
     * @param closer where a broken connection is given back to its pool: commons-pool 2.13 replaces an invalidated
     *     connection at once, on the returning thread, which on a stalled server costs that thread a whole
     *     command timeout more
     */
    WaitConnections(UnifiedJedis client, Executor closer) {
        this.client = client;
        this.closer = closer;
        if (!(client instanceof RedisClient)
                && !(client instanceof StandaloneRedis)
                && !(client instanceof SentinelRedis)
                && !(client instanceof RedisSentinelClient)
                && !isCluster(client)) {
            throw new IllegalArgumentException("Redis lock waiters need a pooled client whose connections they can"
                    + " time out one BLPOP at a time: a RedisClient, RedisSentinelClient, RedisClusterClient or"
                    + " JedisCluster, not " + client.getClass().getName()
                    + "; pass one of those (as the client or as waitClient)");
        }
    }

    @SuppressWarnings("deprecation") // JedisCluster: deprecated in Jedis 8 but what many applications still hand us
    static boolean isCluster(UnifiedJedis client) {
        return client instanceof JedisCluster || client instanceof RedisClusterClient;
    }

    /**
     * The most connections one pool of {@code client} opens to one node ({@code Integer.MAX_VALUE} if unbounded): on a
     * cluster, the smallest of its node pools, since every waiter may wait on the same node.
     */
    @SuppressWarnings("deprecation") // JedisCluster, see isCluster
    static int poolCapacity(UnifiedJedis client) {
        int capacity = Integer.MAX_VALUE;
        for (Pool<Connection> pool : nodePools(client, "").values()) {
            capacity = Math.min(capacity, bounded(pool.getMaxTotal()));
        }
        return capacity;
    }

    /**
     * The connection pools of {@code client} by node address: each node pool of a cluster client, the current
     * master's pool of a {@code RedisSentinelClient}, or the one pool of a {@code RedisClient} under {@code
     * address}; empty for any other client.
     */
    @SuppressWarnings("deprecation") // JedisCluster, see isCluster
    static Map<String, Pool<Connection>> nodePools(UnifiedJedis client, String address) {
        Map<String, Pool<Connection>> pools = new LinkedHashMap<>();
        if (client instanceof RedisClient rc) {
            pools.put(address, rc.getPool());
        } else if (client instanceof StandaloneRedis s) {
            pools.put(address, s.pool());
        } else if (client instanceof SentinelRedis sr) {
            pools.put(sr.master().toString(), sr.pool());
        } else if (client instanceof RedisSentinelClient sc) {
            sc.getPrimaryNodesConnectionMap().forEach((node, pool) -> pools.put(String.valueOf(node), pool));
        } else if (client instanceof JedisCluster jc) {
            pools.putAll(jc.getClusterNodes());
        } else if (client instanceof RedisClusterClient rcc) {
            pools.putAll(rcc.getClusterNodes());
        }
        return pools;
    }

    /**
     * The object whose connections {@code client}'s waiters block: its pool, or the cluster client's node pools, or
     * the Sentinel client (whose pool is replaced when the master changes).
     */
    static Object pool(UnifiedJedis client) {
        return client instanceof RedisClient rc
                ? rc.getPool()
                : client instanceof StandaloneRedis s ? s.pool() : client;
    }

    private static int bounded(int maxTotal) {
        return maxTotal < 0 ? Integer.MAX_VALUE : maxTotal;
    }

    /**
     * {@code BLPOP wake cancel timeout} on the node of {@code keys}, its socket timeout bounded as described above.
     *
     * @return the name of the list popped from, or null if the timeout passed
     * @throws redis.clients.jedis.exceptions.JedisException if the server failed, did not answer in time, or closed
     *     the connection (which the pool then discards)
     */
    @SuppressWarnings("deprecation") // JedisCluster, see isCluster
    String blpop(LockKeys keys, String cancelKey, long timeoutMillis) {
        Connection connection = connectionFor(keys);
        try {
            int commandTimeout = connection.getSoTimeout();
            int slack = commandTimeout > 0 ? commandTimeout : DEFAULT_SLACK_MILLIS;
            connection.setSoTimeout((int) Math.min(Integer.MAX_VALUE, timeoutMillis + slack + BLPOP_LATENESS_MILLIS));
            try {
                // Not marked blocking: Jedis would switch to its (infinite) blocking socket timeout.
                Object reply =
                        connection.executeCommand(new redis.clients.jedis.CommandArguments(Protocol.Command.BLPOP)
                                .key(keys.wake())
                                .key(cancelKey)
                                .add(seconds(timeoutMillis)));
                if (reply instanceof List<?> popped && !popped.isEmpty()) {
                    Object key = popped.get(0);
                    return key instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : String.valueOf(key);
                }
                return null;
            } finally {
                if (!connection.isBroken()) {
                    connection.setSoTimeout(commandTimeout);
                }
            }
        } finally {
            giveBack(connection);
        }
    }

    /** A connection to the server that holds {@code keys}. */
    @SuppressWarnings("deprecation") // JedisCluster, see isCluster
    private Connection connectionFor(LockKeys keys) {
        if (client instanceof RedisClient rc) {
            return rc.getPool().getResource();
        }
        if (client instanceof StandaloneRedis s) {
            return s.pool().getResource();
        }
        if (client instanceof SentinelRedis sr) {
            return masterConnection(sr);
        }
        if (client instanceof RedisSentinelClient sc) {
            return masterConnection(sc);
        }
        if (client instanceof JedisCluster jc) {
            return jc.getConnectionFromSlot(keys.slot());
        }
        return ((RedisClusterClient) client).getConnectionFromSlot(keys.slot());
    }

    /** A connection to the master {@code client} sends to now (see the other overload). */
    private static Connection masterConnection(SentinelRedis client) {
        try {
            return client.pool().getResource();
        } catch (IllegalStateException closed) {
            throw new JedisConnectionException("the master's pool was replaced (failover): " + closed, closed);
        }
    }

    /**
     * A connection to the master a Sentinel client follows now. Its pool is replaced when the master changes; one
     * closed under this call fails like a connection that broke.
     */
    private static Connection masterConnection(RedisSentinelClient client) {
        for (Pool<Connection> pool : client.getPrimaryNodesConnectionMap().values()) {
            try {
                return pool.getResource();
            } catch (IllegalStateException closed) {
                throw new JedisConnectionException("the master's pool was replaced (failover): " + closed, closed);
            }
        }
        throw new JedisConnectionException("the Sentinel client knows no master");
    }

    /** Returns {@code connection} to its pool, a broken one from the {@code closer} (see the constructor). */
    private void giveBack(Connection connection) {
        if (!connection.isBroken()) {
            connection.close();
            return;
        }
        connection.disconnect(); // the socket goes now, whatever the pool does
        try {
            closer.execute(() -> closeQuietly(connection));
        } catch (RejectedExecutionException closing) {
            closeQuietly(connection);
        }
    }

    /** Gives a broken connection back; the pool's replacement may fail to connect (server down), which is fine. */
    private static void closeQuietly(Connection connection) {
        try {
            connection.close();
        } catch (JedisException e) {
            // "Could not return the broken resource": the replacement could not connect; the next borrow retries
        }
    }

    /** BLPOP's timeout in seconds with millisecond precision (Redis 6+ accepts decimals); never 0 (= for ever). */
    static String seconds(long millis) {
        long ms = Math.max(1, millis);
        return ms / 1000 + "." + String.format(Locale.ROOT, "%03d", ms % 1000);
    }
}
