package org.locksmith.lock.redis;

import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.locksmith.lock.spi.LockUrl;
import redis.clients.jedis.HostAndPort;

/**
 * The whole TCK against the Redis of the environment ({@code LOCKSMITH_TEST_REDIS_URL}, else Testcontainers, else
 * embedded-redis), including worker JVMs, {@code CLIENT KILL} of a client's connections and deletion of a lock's
 * hash. Uses a key prefix of its own and never flushes the server.
 */
class RedisTckTest extends RedisTckSupport {
    private static TestRedis redis;

    @BeforeAll
    static void startRedis() {
        redis = TestRedis.discover();
    }

    @AfterAll
    static void stopRedis() {
        if (redis != null) {
            redis.close();
        }
    }

    @Override
    protected String baseUrl() {
        return redis.url();
    }

    @Override
    protected List<HostAndPort> nodes() {
        LockUrl.HostAndPort h = LockUrl.parse(redis.url()).hosts().get(0);
        return List.of(new HostAndPort(h.host(), h.port(6379)));
    }
}
