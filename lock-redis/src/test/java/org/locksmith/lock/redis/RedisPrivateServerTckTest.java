package org.locksmith.lock.redis;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.locksmith.lock.tck.LockFaults;
import org.locksmith.lock.testservers.PrivateRedis;
import redis.clients.jedis.HostAndPort;

/**
 * The TCK against a private {@code redis-server} (free port, no persistence), which it may also restart (every key
 * lost: the durable-fencing contract) and pause with SIGSTOP (the unavailable-store contract).
 *
 * <p>The default run runs this class with the client used from virtual threads, on the newest JDK of the machine
 * ({@link RedisVirtualThreadTckTest}); tagged {@code thorough}, {@code -Pthorough} runs it on platform threads too.
 */
@Tag("thorough")
class RedisPrivateServerTckTest extends RedisTckSupport {
    private static PrivateRedis redis;

    @BeforeAll
    static void startRedis() {
        redis = PrivateRedis.start();
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
        return List.of(redis.hostAndPort());
    }

    @Override
    protected Set<LockFaults.Fault> extraFaults() {
        return Set.of(
                LockFaults.Fault.RESTART_STORE, LockFaults.Fault.RESTART_STORE_EMPTY, LockFaults.Fault.STORE_OUTAGE);
    }

    /** The server keeps nothing on disk: a crash restart is an empty restart (both faults do this). */
    @Override
    protected void restartStore() {
        redis.restart();
    }

    @Override
    protected LockFaults.Outage beginOutage() {
        redis.pause();
        return redis::resume;
    }
}
