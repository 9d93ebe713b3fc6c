package org.locksmith.lock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.testservers.TestRedis;

/**
 * A benchmark, not a test: uncontended acquire+release latency (p50/p99) on one client, and contended hand-offs per
 * second on one key with 8 clients (one thread each). Run it with
 *
 * <pre>
 * ./mvnw -B -q -pl lock-redis test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=org.locksmith.lock.redis.RedisLockBenchmark [-Dexec.args="redis://127.0.0.1:6379"]
 * </pre>
 *
 * The URL defaults to {@code LOCKSMITH_TEST_REDIS_URL}, else {@code redis://127.0.0.1:6379}. Keys go under a random
 * prefix and are released at the end.
 */
public final class RedisLockBenchmark {
    private static final int WARMUP = 3_000;
    private static final int MEASURED = 20_000;
    private static final int CLIENTS = 8;
    private static final Duration CONTENDED_RUN = Duration.ofSeconds(10);

    private RedisLockBenchmark() {}

    public static void main(String[] args) throws Exception {
        String base = args.length > 0
                ? args[0]
                : System.getenv().getOrDefault(TestRedis.ENVIRONMENT_VARIABLE, "redis://127.0.0.1:6379");
        String url = base + (base.contains("?") ? "&" : "?") + "prefix=locksmith-bench:"
                + Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36) + ":";
        System.out.println("Redis lock benchmark against " + base + " ("
                + Runtime.getRuntime().availableProcessors() + " cores, Java " + Runtime.version() + ")");
        uncontended(url);
        contended(url);
    }

    private static void uncontended(String url) throws InterruptedException {
        Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        try (LockClient locks = Locks.open(url)) {
            var lock = locks.lock("uncontended");
            for (int i = 0; i < WARMUP + MEASURED; i++) {
                long start = System.nanoTime();
                lock.acquire(Duration.ofSeconds(5)).release();
                long took = System.nanoTime() - start;
                if (i >= WARMUP) {
                    histogram.recordValue(took);
                }
            }
        }
        System.out.printf(
                "uncontended acquire+release (%d ops, 1 client, 1 thread): p50 %.1f us, p99 %.1f us, p99.9 %.1f us,"
                        + " mean %.1f us%n",
                MEASURED,
                histogram.getValueAtPercentile(50) / 1e3,
                histogram.getValueAtPercentile(99) / 1e3,
                histogram.getValueAtPercentile(99.9) / 1e3,
                histogram.getMean() / 1e3);
    }

    private static void contended(String url) throws Exception {
        List<LockClient> clients = new ArrayList<>();
        for (int i = 0; i < CLIENTS; i++) {
            clients.add(Locks.open(url));
        }
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong grants = new AtomicLong();
        AtomicLong handoffs = new AtomicLong();
        AtomicLong lastHolder = new AtomicLong(-1);
        Histogram wait = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        CountDownLatch done = new CountDownLatch(CLIENTS);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < CLIENTS; i++) {
            int id = i;
            LockClient client = clients.get(i);
            Thread t = new Thread(
                    () -> {
                        try {
                            var lock = client.lock("contended");
                            while (!stop.get()) {
                                long start = System.nanoTime();
                                try (LockLease lease = lock.acquire(Duration.ofSeconds(30))) {
                                    long waited = System.nanoTime() - start;
                                    synchronized (wait) {
                                        wait.recordValue(waited);
                                    }
                                    grants.incrementAndGet();
                                    if (lastHolder.getAndSet(id) != id) {
                                        handoffs.incrementAndGet();
                                    }
                                }
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        } finally {
                            done.countDown();
                        }
                    },
                    "bench-client-" + i);
            t.setDaemon(true);
            threads.add(t);
        }
        long start = System.nanoTime();
        threads.forEach(Thread::start);
        TimeUnit.MILLISECONDS.sleep(CONTENDED_RUN.toMillis()); // the run's length, not a wait for a condition
        stop.set(true);
        done.await(60, TimeUnit.SECONDS);
        double seconds = (System.nanoTime() - start) / 1e9;
        clients.forEach(LockClient::close);
        System.out.printf(
                "contended, one key, %d clients x 1 thread, %.1f s: %.0f grants/s, %.0f handoffs/s (holder changed),"
                        + " wait p50 %.2f ms, p99 %.2f ms%n",
                CLIENTS,
                seconds,
                grants.get() / seconds,
                handoffs.get() / seconds,
                wait.getValueAtPercentile(50) / 1e6,
                wait.getValueAtPercentile(99) / 1e6);
    }
}
