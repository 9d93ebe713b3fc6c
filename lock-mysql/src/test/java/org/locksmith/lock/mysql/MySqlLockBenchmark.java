package org.locksmith.lock.mysql;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;

/**
 * A small benchmark, not a test (surefire does not run it): per strategy, the latency of an uncontended
 * acquire+release on one client, and the hand-offs per second of one key contended by 8 clients (one thread each).
 * Run it with the test class path (see README.md):
 *
 * <pre>
 * java -cp "$(cat /tmp/cp.txt):lock-mysql/target/classes:lock-mysql/target/test-classes" \
 *     org.locksmith.lock.mysql.MySqlLockBenchmark mysql://root@127.0.0.1:3306/test
 * </pre>
 */
public final class MySqlLockBenchmark {
    private static final int UNCONTENDED = 2000;
    private static final int CLIENTS = 8;
    private static final Duration CONTENDED_RUN = Duration.ofSeconds(5);

    private MySqlLockBenchmark() {}

    public static void main(String[] args) throws Exception {
        String base = args.length > 0 ? args[0] : MySqlTestServer.baseUrl();
        String table = MySqlTestServer.uniqueTable("bench");
        System.out.printf(
                Locale.ROOT,
                "MySQL lock benchmark on %s, %d cores%n",
                base,
                Runtime.getRuntime().availableProcessors());
        try {
            for (MySqlStrategy strategy : MySqlStrategy.values()) {
                String url = base + "?strategy=" + strategy.urlValue() + "&table=" + table + "&leaseMs=10000";
                uncontended(strategy, url);
                contended(strategy, url);
            }
        } finally {
            MySqlTestServer.dropTables(base, table);
        }
    }

    private static void uncontended(MySqlStrategy strategy, String url) throws Exception {
        try (LockClient client = Locks.open(url)) {
            String key = "bench:uncontended:" + strategy;
            for (int i = 0; i < 200; i++) { // warm-up: JIT, pool, row creation
                client.lock(key).acquire(Duration.ofSeconds(5)).release();
            }
            long[] nanos = new long[UNCONTENDED];
            for (int i = 0; i < UNCONTENDED; i++) {
                long t0 = System.nanoTime();
                client.lock(key).acquire(Duration.ofSeconds(5)).release();
                nanos[i] = System.nanoTime() - t0;
            }
            Arrays.sort(nanos);
            System.out.printf(
                    Locale.ROOT,
                    "%-6s uncontended acquire+release: median %.3f ms, p90 %.3f ms, p99 %.3f ms (n=%d)%n",
                    strategy,
                    nanos[UNCONTENDED / 2] / 1e6,
                    nanos[UNCONTENDED * 9 / 10] / 1e6,
                    nanos[UNCONTENDED * 99 / 100] / 1e6,
                    UNCONTENDED);
        }
    }

    private static void contended(MySqlStrategy strategy, String url) throws Exception {
        String key = "bench:contended:" + strategy;
        List<LockClient> clients = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong grants = new AtomicLong();
        AtomicLong failures = new AtomicLong();
        CountDownLatch ready = new CountDownLatch(CLIENTS);
        try {
            for (int i = 0; i < CLIENTS; i++) {
                LockClient client = Locks.open(url);
                clients.add(client);
                Thread t = new Thread(
                        () -> {
                            ready.countDown();
                            while (!stop.get()) {
                                try (LockLease lease = client.lock(key).acquire(Duration.ofSeconds(10))) {
                                    grants.incrementAndGet();
                                } catch (InterruptedException e) {
                                    return;
                                } catch (RuntimeException e) {
                                    failures.incrementAndGet();
                                }
                            }
                        },
                        "bench-client-" + i);
                t.setDaemon(true);
                threads.add(t);
            }
            threads.forEach(Thread::start);
            ready.await();
            long g0 = grants.get();
            long t0 = System.nanoTime();
            TimeUnit.NANOSECONDS.sleep(CONTENDED_RUN.toNanos());
            long g1 = grants.get();
            double seconds = (System.nanoTime() - t0) / 1e9;
            stop.set(true);
            for (Thread t : threads) {
                t.join(15_000);
            }
            System.out.printf(
                    Locale.ROOT,
                    "%-6s contended, %d clients on one key: %.0f hand-offs/s (%d grants in %.1f s, %d failures)%n",
                    strategy,
                    CLIENTS,
                    (g1 - g0) / seconds,
                    g1 - g0,
                    seconds,
                    failures.get());
        } finally {
            stop.set(true);
            for (LockClient c : clients) {
                c.close();
            }
        }
    }
}
