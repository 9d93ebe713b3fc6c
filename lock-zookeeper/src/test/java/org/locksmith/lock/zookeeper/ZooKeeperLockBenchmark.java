package org.locksmith.lock.zookeeper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.testservers.EmbeddedZooKeeper;

/**
 * A small benchmark, not a test: uncontended acquire+release latency on one client, and contended hand-offs per
 * second on one key shared by 8 clients (8 sessions). It starts a private in-process server unless a URL is given.
 *
 * <pre>
 * ./mvnw -B -q -pl lock-zookeeper test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=org.locksmith.lock.zookeeper.ZooKeeperLockBenchmark [-Dexec.args=zookeeper://host:2181/bench]
 * </pre>
 *
 * The server's transaction-log fsync dominates: add {@code -Dzookeeper.forceSync=no} (embedded server only) to see
 * the recipe's own cost, and say so when quoting such numbers.
 */
public final class ZooKeeperLockBenchmark {
    private static final int UNCONTENDED = 2_000;
    private static final int CLIENTS = 8;
    private static final Duration CONTENDED_FOR = Duration.ofSeconds(10);

    private ZooKeeperLockBenchmark() {}

    public static void main(String[] args) throws Exception {
        EmbeddedZooKeeper server = null;
        String url;
        if (args.length > 0) {
            url = args[0];
        } else {
            server = new EmbeddedZooKeeper();
            url = server.url("/bench", 30_000, 5_000);
        }
        System.out.println("zookeeper lock benchmark: " + url + ", zookeeper.forceSync="
                + System.getProperty("zookeeper.forceSync", "yes (default)") + ", "
                + Runtime.getRuntime().availableProcessors() + " cpus, java " + Runtime.version());
        try {
            uncontended(url);
            contended(url);
        } finally {
            if (server != null) {
                server.close();
            }
        }
    }

    private static void uncontended(String url) throws InterruptedException {
        try (LockClient client = Locks.open(url)) {
            for (int i = 0; i < 200; i++) {
                client.lock("uncontended").acquire(Duration.ofSeconds(5)).release();
            }
            long[] micros = new long[UNCONTENDED];
            for (int i = 0; i < UNCONTENDED; i++) {
                long start = System.nanoTime();
                client.lock("uncontended").acquire(Duration.ofSeconds(5)).release();
                micros[i] = (System.nanoTime() - start) / 1_000;
            }
            Arrays.sort(micros);
            double mean = Arrays.stream(micros).average().orElse(0);
            System.out.printf(
                    "uncontended acquire+release (%d ops, one client): mean %.0f us, p50 %d us, p90 %d us, p99 %d us%n",
                    UNCONTENDED,
                    mean,
                    micros[UNCONTENDED / 2],
                    micros[UNCONTENDED * 9 / 10],
                    micros[UNCONTENDED * 99 / 100]);
        }
    }

    private static void contended(String url) throws Exception {
        List<LockClient> clients = new ArrayList<>();
        for (int i = 0; i < CLIENTS; i++) {
            clients.add(Locks.open(url));
        }
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong grants = new AtomicLong();
        AtomicLong overlaps = new AtomicLong();
        AtomicLong inside = new AtomicLong();
        CountDownLatch started = new CountDownLatch(CLIENTS);
        List<Thread> threads = new ArrayList<>();
        try {
            for (int i = 0; i < CLIENTS; i++) {
                LockClient client = clients.get(i);
                Thread t = new Thread(
                        () -> {
                            started.countDown();
                            try {
                                while (!stop.get()) {
                                    LockLease lease = client.lock("contended").acquire(Duration.ofSeconds(30));
                                    if (inside.incrementAndGet() != 1) {
                                        overlaps.incrementAndGet();
                                    }
                                    grants.incrementAndGet();
                                    inside.decrementAndGet();
                                    lease.release();
                                }
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        },
                        "bench-client-" + i);
                t.setDaemon(true);
                threads.add(t);
                t.start();
            }
            started.await();
            long before = grants.get();
            long start = System.nanoTime();
            Thread.sleep(CONTENDED_FOR.toMillis()); // the measurement window
            long count = grants.get() - before;
            double seconds = (System.nanoTime() - start) / 1e9;
            stop.set(true);
            for (Thread t : threads) {
                t.join(60_000);
            }
            System.out.printf(
                    "contended, one key, %d clients: %.0f hand-offs/s (%d grants in %.1f s, %d overlaps)%n",
                    CLIENTS, count / seconds, count, seconds, overlaps.get());
        } finally {
            stop.set(true);
            clients.forEach(LockClient::close);
        }
    }
}
