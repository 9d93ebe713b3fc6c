package org.locksmith.lock.redis;

import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import redis.clients.jedis.HostAndPort;

/**
 * The TCK against a Sentinel-managed master ({@link PrivateRedisSentinel}: master, replica, one sentinel), opened
 * with {@code sentinelMaster} in the URL. Tagged {@code thorough} ({@code -Pthorough -Dtest=RedisSentinelTckTest}):
 * the default run has the failover test ({@link RedisSentinelTest}), and the scripts and waits are those of the
 * standalone runs.
 */
@Tag("thorough")
class RedisSentinelTckTest extends RedisTckSupport {
    private static PrivateRedisSentinel sentinel;

    @BeforeAll
    static void startSentinel() {
        sentinel = PrivateRedisSentinel.start();
    }

    @AfterAll
    static void stopSentinel() {
        if (sentinel != null) {
            sentinel.close();
        }
    }

    @Override
    protected String baseUrl() {
        return sentinel.url("").replace("&restartHoldOffMs=0", "");
    }

    @Override
    protected List<HostAndPort> nodes() {
        return List.of(sentinel.master());
    }
}
