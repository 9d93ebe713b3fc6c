package org.locksmith.lock.redis.internal;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.locksmith.lock.DistributedLock;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;
import org.locksmith.lock.testservers.TestRedis;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.UnifiedJedis;

/**
 * A benchmark, not a test: what the client side (core, backend, Jedis pool) adds to an uncontended acquire +
 * release, against the same two scripts sent through a plain Jedis client and against two {@code EVALSHA} of {@code
 * return 1}. The three are interleaved call by call (each iteration runs all three, in a rotating order), so the
 * loopback's latency, which moves by several times within a minute on a busy machine, is the same for all three.
 * Run it with
 *
 * <pre>
 * ./mvnw -B -q -pl lock-redis test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=org.locksmith.lock.redis.internal.RedisClientOverhead [-Dexec.args="20000"]
 * </pre>
 *
 * against {@code LOCKSMITH_TEST_REDIS_URL}'s host and port, else 127.0.0.1:6379 (no password). Prints p25, p50 and
 * p75 of each, in microseconds.
 */
public final class RedisClientOverhead {
    private RedisClientOverhead() {}

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        String url = System.getenv().getOrDefault(TestRedis.ENVIRONMENT_VARIABLE, "redis://127.0.0.1:6379");
        java.net.URI uri = java.net.URI.create(url);
        String prefix = "overhead-" + UUID.randomUUID();
        try (LockClient client = Locks.open(url);
                UnifiedJedis jedis = RedisClient.builder()
                        .hostAndPort(new HostAndPort(uri.getHost(), uri.getPort()))
                        .build()) {
            DistributedLock lock = client.lock(prefix + "-locksmith");
            String one = jedis.scriptLoad("return 1");
            String acquire = jedis.scriptLoad(LockScripts.ACQUIRE);
            String release = jedis.scriptLoad(LockScripts.RELEASE);
            List<String> hash = List.of("{" + prefix + "}:h");
            List<String> hashAndWake = List.of("{" + prefix + "}:h", "{" + prefix + "}:w");
            long[][] t = new long[3][n];
            for (int i = -n / 4; i < n; i++) { // the first quarter warms up
                for (int j = 0; j < 3; j++) {
                    int k = (Math.floorMod(i, 3) + j) % 3;
                    long start = System.nanoTime();
                    switch (k) {
                        case 0 -> lock.acquire(Duration.ofSeconds(5)).release();
                        case 1 -> {
                            jedis.evalsha(acquire, hash, List.of("owner", "30000", "0", "0", "0"));
                            jedis.evalsha(release, hashAndWake, List.of("owner", "2000"));
                        }
                        default -> {
                            jedis.evalsha(one, List.of(), List.of());
                            jedis.evalsha(one, List.of(), List.of());
                        }
                    }
                    long took = System.nanoTime() - start;
                    if (i >= 0) {
                        t[k][i] = took;
                    }
                }
            }
            jedis.del(hash.get(0), hashAndWake.get(1));
            String[] names = {
                "Locksmith acquire + release", "the same two scripts, plain Jedis", "two EVALSHA of return 1"
            };
            for (int k = 0; k < 3; k++) {
                long[] s = t[k].clone();
                Arrays.sort(s);
                System.out.printf(
                        java.util.Locale.ROOT,
                        "%-36s p25 %7.1f  p50 %7.1f  p75 %7.1f us%n",
                        names[k],
                        s[n / 4] / 1000.0,
                        s[n / 2] / 1000.0,
                        s[3 * n / 4] / 1000.0);
            }
        }
    }
}
