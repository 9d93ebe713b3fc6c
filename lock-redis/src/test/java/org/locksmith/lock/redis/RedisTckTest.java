package org.locksmith.lock.redis;

import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.locksmith.lock.spi.LockUrl;
import org.locksmith.lock.testservers.TestRedis;
import redis.clients.jedis.HostAndPort;

/**
 * The whole TCK against the Redis of the environment ({@code LOCKSMITH_TEST_REDIS_URL}, else Testcontainers, else
 * embedded-redis), including worker JVMs, {@code CLIENT KILL} of a client's connections and deletion of a lock's
 * hash. Uses a key prefix of its own and never flushes the server.
 *
 * <p>Tagged {@code thorough} (run with {@code -Pthorough}; alone: {@code -Pthorough -Dtest=RedisTckTest}): the default
 * run already runs the TCK on the machine's {@code redis-server} ({@link RedisPrivateServerTckTest}, with restarts
 * and pauses too) and on embedded-redis ({@link RedisEmbeddedTckTest}), which is what this class finds in CI and on
 * a fresh machine. Point {@code LOCKSMITH_TEST_REDIS_URL} at another Redis and run it to prove that one.
 */
@Tag("thorough")
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
