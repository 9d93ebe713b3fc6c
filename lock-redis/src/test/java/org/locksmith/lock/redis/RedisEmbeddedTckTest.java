package org.locksmith.lock.redis;

import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.locksmith.lock.spi.LockUrl;
import org.locksmith.lock.testservers.TestRedis;
import redis.clients.jedis.HostAndPort;

/**
 * The fresh-machine path, always exercised: the TCK against an embedded Redis (embedded-redis, Redis 6.2) that the
 * test starts itself, whatever {@code LOCKSMITH_TEST_REDIS_URL} says. Proves the scripts run on Redis 6.2 and that a
 * machine with only a JDK passes.
 *
 * <p>Tagged thorough (-Pthorough): in the default build the private-server TCK (RedisVirtualThreadTckTest) runs on this same embedded Redis 6.2 binary wherever no redis-server is installed, which is the fresh-machine path.
 */
@Tag("thorough")
class RedisEmbeddedTckTest extends RedisTckSupport {
    private static TestRedis redis;

    @BeforeAll
    static void startRedis() {
        redis = TestRedis.embedded();
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
