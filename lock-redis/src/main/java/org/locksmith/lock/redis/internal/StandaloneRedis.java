package org.locksmith.lock.redis.internal;

import java.util.Map;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Connection;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.providers.ConnectionProvider;
import redis.clients.jedis.util.Pool;

/**
 * The client of one Redis server that a lock URL opens: Jedis's {@code RedisClient} on a {@link FairConnectionPool}
 * instead of its commons-pool2 pool, so that virtual threads borrowing and returning connections never pin their
 * carriers on Java 21. A client an application passes in keeps its own pool.
 */
final class StandaloneRedis extends UnifiedJedis {
    private final HostAndPort server;
    private final FairConnectionPool pool;

    private StandaloneRedis(HostAndPort server, FairConnectionPool pool, JedisClientConfig config) {
        super(new OnePool(server, pool), config.getRedisProtocol());
        this.server = server;
        this.pool = pool;
    }

    /** A client of {@code server}; connects lazily, on the first command. */
    static StandaloneRedis open(
            HostAndPort server, JedisClientConfig config, GenericObjectPoolConfig<Connection> poolConfig) {
        return new StandaloneRedis(server, new FairConnectionPool(server, config, poolConfig), config);
    }

    /** The server this client sends to. */
    HostAndPort server() {
        return server;
    }

    /** The pool of connections to {@link #server()}. */
    Pool<Connection> pool() {
        return pool;
    }

    /** Every command on a connection of the one pool. */
    private record OnePool(HostAndPort server, FairConnectionPool pool) implements ConnectionProvider {
        @Override
        public Connection getConnection() {
            return pool.getResource();
        }

        @Override
        public Connection getConnection(CommandArguments args) {
            return pool.getResource();
        }

        @Override
        public Map<?, ?> getConnectionMap() {
            return Map.of(server, pool);
        }

        @Override
        public Map<?, ?> getPrimaryNodesConnectionMap() {
            return Map.of(server, pool);
        }

        @Override
        public void close() {
            pool.close();
        }
    }
}
