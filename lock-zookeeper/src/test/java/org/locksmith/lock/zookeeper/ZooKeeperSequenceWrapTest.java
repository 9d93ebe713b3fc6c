package org.locksmith.lock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.zookeeper.internal.LockNodes;

/**
 * ZooKeeper numbers a key's nodes by a signed 32-bit counter of the key's parent node, which reaches its end after
 * 2<sup>31</sup> creates and deletes (weeks of {@code tryAcquire()} polling on a key held for that long): ZooKeeper 3.9
 * then gives every new node the same number, older servers negative numbers and, later, small ones again. Locks stay
 * exclusive and in arrival order: attempts fail loudly near the end. The test moves the server's counter there
 * instead of counting up to it.
 */
class ZooKeeperSequenceWrapTest {
    private static EmbeddedZooKeeper server;
    private static CuratorFramework admin;
    private static String root;
    private final List<LockClient> clients = new CopyOnWriteArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "zk-wrap-test");
        t.setDaemon(true);
        return t;
    });

    @BeforeAll
    static void start() {
        server = new EmbeddedZooKeeper();
        admin = ZooKeeperTestSupport.admin(server.connectString());
        root = ZooKeeperTestSupport.uniqueRoot("wrap");
    }

    @AfterAll
    static void stop() throws Exception {
        admin.close();
        server.close();
    }

    @AfterEach
    void closeClients() throws Exception {
        threads.shutdownNow();
        for (LockClient c : clients) {
            c.close();
        }
        assertThat(threads.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    private LockClient client() {
        LockClient c = Locks.open(server.url(root, 2_000, 2_000));
        clients.add(c);
        return c;
    }

    /**
     * The key's parent, created persistent and empty (as the backend creates it, and unlike Curator's default data)
     * so that nothing deletes it, with its counter set to {@code cversion}.
     */
    private static String parentAt(String key, int cversion) throws Exception {
        String path = root + "/" + LockNodes.encodeKey(key);
        admin.create().creatingParentsIfNeeded().forPath(path, new byte[0]);
        server.setChildVersion(path, cversion);
        return path;
    }

    private static int counter(String path) throws Exception {
        Stat stat = admin.checkExists().forPath(path);
        return stat.getCversion();
    }

    @Test
    void attemptsFailLoudlyNearTheCounterEndWhileNodesQueuedBeforeKeepTheirOrder() throws Exception {
        long limit = (1L << 31) - (1L << 24);
        String path = parentAt("counter-end", (int) (limit - 9));
        LockClient holder = client();
        LockClient poller = client();
        LockLease held = holder.lock("counter-end").acquire(Duration.ofSeconds(5));

        List<Integer> order = new CopyOnWriteArrayList<>();
        List<Long> tokens = new CopyOnWriteArrayList<>();
        tokens.add(held.fencingToken());
        List<Future<?>> waiters = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            int id = i;
            LockClient c = client();
            waiters.add(threads.submit(() -> {
                try (LockLease lease = c.lock("counter-end").acquire(Duration.ofSeconds(20))) {
                    order.add(id);
                    tokens.add(lease.fencingToken());
                }
                return null;
            }));
            int queued = i + 2;
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> ZooKeeperTestSupport.children(admin, path).size() == queued);
        }

        // Each try creates and deletes a node, two counts: the third or fourth is numbered past the limit.
        LockBackendException refused = null;
        for (int i = 0; i < 6 && refused == null; i++) {
            try {
                assertThat(poller.lock("counter-end").tryAcquire()).isEmpty();
            } catch (LockBackendException e) {
                refused = e;
            }
        }
        assertThat(refused).as("an attempt numbered past the limit fails").isNotNull();
        assertThat(refused.getMessage()).contains("counter-end").contains("sequence counter");
        assertThat(ZooKeeperTestSupport.children(admin, path)).hasSize(4);

        // Where the counter goes next depends on the server: ZooKeeper 3.9 stops it at 2^31 - 1, older servers let
        // it go negative and, after 2^32, back to small numbers that sort before the holder. No new attempt may
        // take itself for the first in line.
        for (int counter : new int[] {Integer.MAX_VALUE, Integer.MIN_VALUE + 5, -7, 3}) {
            server.setChildVersion(path, counter);
            assertThatThrownBy(() -> poller.lock("counter-end").tryAcquire())
                    .as("try at counter %d", counter)
                    .isInstanceOf(LockBackendException.class);
        }
        assertThatThrownBy(() -> poller.lock("counter-end").acquire(Duration.ofMillis(500)))
                .isInstanceOf(LockBackendException.class);
        Thread.sleep(200);
        assertThat(held.isValid()).isTrue();
        assertThat(order).as("granted while the first holder holds").isEmpty();

        // The nodes queued before the mark keep their place and order.
        held.release();
        for (Future<?> f : waiters) {
            f.get(20, TimeUnit.SECONDS);
        }
        assertThat(order).containsExactly(0, 1, 2);
        assertThat(tokens).isSorted().doesNotHaveDuplicates();

        // Once the key is free and its parent gone, with its counter, the key works again.
        admin.delete().forPath(path);
        try (LockLease again = poller.lock("counter-end").acquire(Duration.ofSeconds(5))) {
            assertThat(again.fencingToken()).isGreaterThan(tokens.get(tokens.size() - 1));
        }
    }
}
