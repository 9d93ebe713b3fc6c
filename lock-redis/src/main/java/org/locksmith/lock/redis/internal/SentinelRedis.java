package org.locksmith.lock.redis.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Connection;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.providers.ConnectionProvider;
import redis.clients.jedis.util.Pool;

/**
 * A client of a Sentinel-managed master: one connection pool to the server the sentinels name as the master, moved
 * when they name another. It asks the sentinels ({@code SENTINEL GET-MASTER-ADDR-BY-NAME}, the first that answers)
 * when it opens and whenever the backend sees a sign of a failover ({@link #follow}): {@code READONLY} from a
 * master made a replica, {@code UNBLOCKED} for a {@code BLPOP} it ended, a connection refused or closed.
 *
 * <p>Why not Jedis' {@code RedisSentinelClient}: it learns of a new master only from a {@code +switch-master}
 * message on a subscription that shares the sentinels' socket timeout, so with a finite timeout it is unsubscribed
 * (reconnecting, 5 s apart) most of the time and misses the switch, and the client keeps writing to the old master
 * for good. A demoted master answers every write with {@code READONLY}, so asking on that sign never misses one.
 */
final class SentinelRedis extends UnifiedJedis {
    /** The least time between two rounds of questions to the sentinels. */
    private static final long REFRESH_SPACING_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final MasterProvider provider;

    private SentinelRedis(MasterProvider provider, JedisClientConfig config) {
        super(provider, config.getRedisProtocol());
        this.provider = provider;
    }

    /** Asks the sentinels for {@code masterName} and opens a pool to it. */
    static SentinelRedis open(
            String masterName,
            Set<HostAndPort> sentinels,
            JedisClientConfig sentinelConfig,
            JedisClientConfig config,
            GenericObjectPoolConfig<Connection> poolConfig) {
        MasterProvider provider =
                new MasterProvider(masterName, List.copyOf(sentinels), sentinelConfig, config, poolConfig);
        return new SentinelRedis(provider, config);
    }

    /** The master this client sends to now. */
    HostAndPort master() {
        return provider.master;
    }

    /** The pool of connections to {@link #master()}; replaced when the master moves. */
    Pool<Connection> pool() {
        return provider.pool;
    }

    /**
     * Asks the sentinels where the master is, unless that was asked less than 100 ms ago, and moves the pool there
     * if they name another server.
     *
     * @return whether the pool moved to another master
     */
    boolean follow() {
        return provider.follow();
    }

    /** The connections to the current master, moved by {@link #follow()}. */
    private static final class MasterProvider implements ConnectionProvider {
        private final String masterName;
        private final List<HostAndPort> sentinels;
        private final JedisClientConfig sentinelConfig;
        private final JedisClientConfig config;
        private final GenericObjectPoolConfig<Connection> poolConfig;
        private volatile HostAndPort master;
        private volatile FairConnectionPool pool;
        private long askedAt;
        private boolean closed;

        MasterProvider(
                String masterName,
                List<HostAndPort> sentinels,
                JedisClientConfig sentinelConfig,
                JedisClientConfig config,
                GenericObjectPoolConfig<Connection> poolConfig) {
            this.masterName = masterName;
            this.sentinels = sentinels;
            this.sentinelConfig = sentinelConfig;
            this.config = config;
            this.poolConfig = poolConfig;
            this.master = ask();
            this.pool = new FairConnectionPool(master, config, poolConfig);
            this.askedAt = System.nanoTime();
        }

        /** The master the first answering sentinel names; fails saying what each sentinel said. */
        private HostAndPort ask() {
            List<String> failures = new ArrayList<>();
            for (HostAndPort sentinel : sentinels) {
                try (Jedis jedis = new Jedis(sentinel, sentinelConfig)) {
                    List<String> address = jedis.sentinelGetMasterAddrByName(masterName);
                    if (address != null && address.size() == 2) {
                        return new HostAndPort(address.get(0), Integer.parseInt(address.get(1)));
                    }
                    failures.add(sentinel + " does not monitor a master named '" + masterName + "'");
                } catch (JedisException | NumberFormatException e) {
                    failures.add(sentinel + ": " + e.getMessage());
                }
            }
            throw new JedisConnectionException("No sentinel named the master '" + masterName + "': " + failures);
        }

        synchronized boolean follow() {
            long now = System.nanoTime();
            if (closed || now - askedAt < REFRESH_SPACING_NANOS) {
                return false;
            }
            askedAt = now;
            HostAndPort named;
            try {
                named = ask();
            } catch (JedisException e) {
                return false; // no sentinel answers: keep the pool; the command's own failure is reported
            }
            if (named.equals(master)) {
                return false;
            }
            FairConnectionPool old = pool;
            pool = new FairConnectionPool(named, config, poolConfig);
            master = named;
            old.close(); // borrowed connections are destroyed when given back
            return true;
        }

        @Override
        public Connection getConnection() {
            FairConnectionPool p = pool;
            try {
                return p.getResource();
            } catch (IllegalStateException closedMeanwhile) {
                return pool.getResource(); // the pool moved between the read and the borrow
            }
        }

        @Override
        public Connection getConnection(CommandArguments args) {
            return getConnection();
        }

        @Override
        public Map<?, ?> getConnectionMap() {
            return Map.of(master, pool);
        }

        @Override
        public Map<?, ?> getPrimaryNodesConnectionMap() {
            return Map.of(master, pool);
        }

        @Override
        public synchronized void close() {
            closed = true;
            pool.close();
        }
    }
}
