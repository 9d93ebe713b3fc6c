package org.locksmith.lock.redis;

import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.locksmith.lock.LockClient;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisCluster;

/**
 * The TCK against a Redis Cluster of three masters started by the test. Clients are built the way an application
 * with its own Jedis would: {@code RedisLocks} on two {@link JedisCluster}s (short commands, blocking waits); worker
 * JVMs open the same cluster by URL.
 *
 * <p>Tagged thorough (-Pthorough): the default build keeps RedisClusterTest (hash tags, slots, one client across nodes) and RedisClusterFailoverTest; the whole TCK on a cluster takes over a minute.
 */
@Tag("thorough")
class RedisClusterTckTest extends RedisTckSupport {
    private static PrivateRedisCluster cluster;

    @BeforeAll
    static void startCluster() {
        cluster = PrivateRedisCluster.start();
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Override
    protected String baseUrl() {
        return cluster.url();
    }

    @Override
    protected List<HostAndPort> nodes() {
        return cluster.nodeList();
    }

    @Override
    @SuppressWarnings("deprecation")
    protected LockClient open(String clientName) {
        JedisClientConfig config = DefaultJedisClientConfig.builder()
                .timeoutMillis(1_000)
                .clientName(clientName)
                .build();
        JedisCluster commands = new JedisCluster(cluster.hostAndPorts(), config);
        JedisCluster waits = new JedisCluster(cluster.hostAndPorts(), config);
        return RedisLocks.builder()
                .leaseTime(timings().leaseTime())
                .prefix(prefix)
                .waitClient(waits)
                .maxBlockingWaiters(8) // JedisCluster pools hold 8 connections per node by default
                .closeClients(true)
                .address(cluster.url())
                .build(commands);
    }
}
