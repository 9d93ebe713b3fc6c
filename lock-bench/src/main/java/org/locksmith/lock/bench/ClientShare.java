package org.locksmith.lock.bench;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.HdrHistogram.Histogram;
import org.locksmith.lock.DistributedLock;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;
import org.locksmith.lock.redis.internal.LockScripts;
import org.locksmith.lock.redis.internal.RedisSettings;
import redis.clients.jedis.Jedis;

/**
 * S1's companion for Redis: what the client (core, backend, connection pool) adds to the two round trips an
 * uncontended acquire + release needs. Three things run interleaved call by call, one after another in a rotating
 * order: a Locksmith acquire + release through {@link Locks#open(String)}; the same two scripts with the same
 * arguments (lease, restart hold-off, wake-up TTL: the defaults) through one bare Jedis connection; and two {@code
 * EVALSHA} of {@code return 1}. Interleaving gives all three the same loopback latency, which on this machine moves
 * by several times within a minute, so separate blocks (or a floor measured before a JMH run) cannot tell a 5 %
 * difference.
 */
final class ClientShare {
    /** The Redis backend's default lease, and so its default restart hold-off. */
    private static final String LEASE_MS = Long.toString(RedisSettings.DEFAULT_LEASE.toMillis());
    /** The backend's wake-up list TTL for that lease: the lease, at most 10 s. */
    private static final String WAKE_TTL_MS = "10000";

    private ClientShare() {}

    static Results.ClientShare redis(Stores stores, BenchPlan plan) throws Exception {
        int n = plan.floorSamples();
        String prefix = "locksmith-bench-" + stores.runId() + "-share-" + UUID.randomUUID();
        List<String> hash = List.of("{" + prefix + "}:h");
        List<String> hashAndWake = List.of(hash.get(0), "{" + prefix + "}:w");
        Histogram[] took = {new Histogram(3), new Histogram(3), new Histogram(3)};
        try (LockClient client = Locks.open(stores.redisUrl());
                Jedis jedis = stores.redis()) {
            DistributedLock lock = client.lock(prefix + "-locksmith");
            String one = jedis.scriptLoad("return 1");
            String acquire = jedis.scriptLoad(LockScripts.acquireScript());
            String release = jedis.scriptLoad(LockScripts.releaseScript());
            Duration wait = Duration.ofSeconds(5);
            for (int i = -n / 4; i < n; i++) { // the first quarter warms up
                for (int j = 0; j < 3; j++) {
                    int k = (Math.floorMod(i, 3) + j) % 3;
                    long start = System.nanoTime();
                    switch (k) {
                        case 0 -> lock.acquire(wait).release();
                        case 1 -> {
                            String owner = "bench-" + i;
                            jedis.evalsha(acquire, hash, List.of(owner, LEASE_MS, "0", "0", LEASE_MS));
                            jedis.evalsha(release, hashAndWake, List.of(owner, WAKE_TTL_MS));
                        }
                        default -> {
                            jedis.evalsha(one, 0);
                            jedis.evalsha(one, 0);
                        }
                    }
                    long elapsed = System.nanoTime() - start;
                    if (i >= 0) {
                        took[k].recordValue(elapsed);
                    }
                }
            }
            jedis.del(hash.get(0), hashAndWake.get(1));
        }
        return new Results.ClientShare(
                "locksmith-redis", p50Micros(took[0]), p50Micros(took[1]), p50Micros(took[2]), n);
    }

    private static double p50Micros(Histogram h) {
        return h.getValueAtPercentile(50) / 1e3;
    }
}
