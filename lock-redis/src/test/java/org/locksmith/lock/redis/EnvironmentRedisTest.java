package org.locksmith.lock.redis;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.locksmith.lock.spi.LockUrl;
import org.locksmith.lock.testservers.TestRedis;
import redis.clients.jedis.Connection;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.RedisClient;

/**
 * Base of the test classes that run on the Redis {@link TestRedis#discover()} finds (the environment's, a container,
 * or an embedded one started for the class), each test under a key prefix of its own.
 */
abstract class EnvironmentRedisTest {
    static TestRedis redis;
    static HostAndPort node;

    /** Unique to this test: part of key prefixes and client names. */
    final String run = Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);

    final String prefix = "locksmith-test:" + run + ":";

    @BeforeAll
    static void startRedis() {
        redis = TestRedis.discover();
        LockUrl.HostAndPort h = LockUrl.parse(redis.url()).hosts().get(0);
        node = new HostAndPort(h.host(), h.port(6379));
    }

    @AfterAll
    static void stopRedis() {
        if (redis != null) {
            redis.close();
            redis = null;
        }
    }

    /**
     * The URL of the test's Redis with {@code params} ({@code name=value&...}). The restart hold-off is off: these
     * tests are not about restarts, and a server the tests just started would otherwise grant nothing for a lease.
     */
    static String url(String params) {
        return redis.url() + "?restartHoldOffMs=0" + (params.isEmpty() ? "" : "&" + params);
    }

    /** An application's pooled client, as {@code RedisLocks.using} receives it. */
    static RedisClient pooledClient(HostAndPort at, String name, int poolSize, int timeoutMillis, Duration maxWait) {
        GenericObjectPoolConfig<Connection> pool = new GenericObjectPoolConfig<>();
        pool.setMaxTotal(poolSize);
        pool.setMaxIdle(poolSize);
        pool.setMaxWait(maxWait);
        return RedisClient.builder()
                .hostAndPort(at)
                .clientConfig(DefaultJedisClientConfig.builder()
                        .clientName(name)
                        .timeoutMillis(timeoutMillis)
                        .build())
                .poolConfig(pool)
                .build();
    }

    /** How many connections named {@code clientName} are blocked (in BLPOP) on the test's Redis right now. */
    static int blockedInBlpop(String clientName) {
        try (Jedis jedis = RedisTckSupport.admin(node)) {
            return RedisTckSupport.blockedClients(jedis, clientName);
        }
    }
}
