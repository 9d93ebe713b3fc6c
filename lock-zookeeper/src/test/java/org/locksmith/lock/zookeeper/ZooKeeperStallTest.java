package org.locksmith.lock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockTimeoutException;
import org.locksmith.lock.Locks;
import org.locksmith.lock.testservers.EmbeddedZooKeeper;
import org.locksmith.lock.testsupport.StallingProxy;
import org.locksmith.lock.zookeeper.internal.LockNodes;

/**
 * A stalled server (stopped, or a quorum that does not answer) keeps the connection open: the ZooKeeper client
 * notices only after two thirds of its session timeout, and Curator then retries by the application's policy. An
 * application's framework with {@code ExponentialBackoffRetry(1000, 10)} must not make a lock operation take
 * minutes: each returns or fails within its deadline or the connection timeout.
 */
class ZooKeeperStallTest {
    static final int CONNECTION_MS = 1_000;
    /** Slack for scheduling on a loaded two-core machine. */
    static final long SLACK_MS = 1_000;

    private EmbeddedZooKeeper server;
    private StallingProxy proxy;
    private CuratorFramework appCurator;
    private LockClient app;
    private LockClient other;
    private CuratorFramework admin;
    private final String root = ZooKeeperTestSupport.uniqueRoot("stall");
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "zk-stall-test");
        t.setDaemon(true);
        return t;
    });

    @BeforeEach
    void start() throws Exception {
        server = EmbeddedZooKeeper.withMaxSessionTimeout(20_000);
        proxy = new StallingProxy(server.port());
        appCurator = CuratorFrameworkFactory.builder()
                .connectString("127.0.0.1:" + proxy.port())
                .sessionTimeoutMs(15_000)
                .connectionTimeoutMs(CONNECTION_MS)
                .retryPolicy(new ExponentialBackoffRetry(1_000, 10))
                .build();
        appCurator.start();
        assertThat(appCurator.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
        app = ZooKeeperLocks.using(appCurator, root);
        other = Locks.open(server.url(root, 4_000, 2_000));
        admin = ZooKeeperTestSupport.admin(server.connectString());
    }

    @AfterEach
    void stop() throws Exception {
        proxy.resume();
        threads.shutdownNow();
        app.close();
        other.close();
        appCurator.close();
        admin.close();
        proxy.close();
        server.close();
    }

    /** Runs {@code op} and returns how long it took; fails if it takes more than {@code boundMs}. */
    private long within(long boundMs, String what, Op op) throws Exception {
        long start = System.nanoTime();
        Future<?> done = threads.submit(() -> {
            op.run();
            return null;
        });
        try {
            done.get(boundMs, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError(what + " took more than " + boundMs + " ms on a stalled server");
        } catch (ExecutionException e) {
            throw new AssertionError(what + " failed: " + e.getCause(), e.getCause());
        }
        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        System.out.printf("[zookeeper] stalled server, %s: %d ms%n", what, took);
        return took;
    }

    private interface Op {
        void run() throws Exception;
    }

    @Test
    void lockOperationsKeepTheirBoundsWhateverTheApplicationsRetryPolicy() throws Exception {
        LockLease busy = other.lock("busy").acquire(Duration.ofSeconds(5));
        LockLease mine = app.lock("mine").acquire(Duration.ofSeconds(5));
        proxy.stall();

        within(
                CONNECTION_MS + SLACK_MS,
                "tryAcquire()",
                () -> assertThat(catchThrowable(() -> app.lock("free").tryAcquire()))
                        .isInstanceOf(LockBackendException.class));
        within(
                1_500 + SLACK_MS,
                "acquire(1.5 s) of a held key",
                () -> assertThat(catchThrowable(() -> app.lock("busy").acquire(Duration.ofMillis(1_500))))
                        .isInstanceOfAny(LockTimeoutException.class, LockBackendException.class));
        long start = System.nanoTime(); // on the owner thread
        assertThat(catchThrowable(mine::release))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("stays scheduled");
        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        System.out.printf("[zookeeper] stalled server, release(): %d ms%n", took);
        assertThat(took).isLessThan(CONNECTION_MS + SLACK_MS);

        proxy.resume();
        // What the attempts and the release left behind is deleted once the server answers again.
        for (String key : new String[] {"free", "mine"}) {
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> ZooKeeperTestSupport.children(admin, path(key)).isEmpty());
        }
        await().atMost(Duration.ofSeconds(20))
                .until(() -> ZooKeeperTestSupport.children(admin, path("busy")).size() == 1);
        busy.release();
        try (LockLease again = app.lock("busy").acquire(Duration.ofSeconds(20))) {
            assertThat(again.isValid()).isTrue();
        }
    }

    private String path(String key) {
        return root + "/" + LockNodes.encodeKey(key);
    }
}
