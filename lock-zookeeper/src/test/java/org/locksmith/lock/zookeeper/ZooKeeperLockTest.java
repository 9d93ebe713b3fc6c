package org.locksmith.lock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.Locks;
import org.locksmith.lock.testservers.EmbeddedZooKeeper;
import org.locksmith.lock.zookeeper.internal.LockNodes;

/** The recipe's own behaviour on a private server: queueing, clean-up of abandoned waiters, keys, loss, fencing. */
class ZooKeeperLockTest {
    private static EmbeddedZooKeeper server;
    private static CuratorFramework admin;
    private static String root;
    private final List<LockClient> clients = new CopyOnWriteArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "zk-lock-test");
        t.setDaemon(true);
        return t;
    });

    @BeforeAll
    static void start() {
        // Sessions of up to 20 s, so a test can tell "at once" from "when the session runs out".
        server = EmbeddedZooKeeper.withMaxSessionTimeout(20_000);
        admin = ZooKeeperTestSupport.admin(server.connectString());
        root = ZooKeeperTestSupport.uniqueRoot("lock");
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
        return client(2_000);
    }

    private LockClient client(long sessionTimeoutMs) {
        LockClient c = ZooKeeperTestSupport.open(server.url(root, sessionTimeoutMs, 2_000));
        clients.add(c);
        return c;
    }

    private static String path(String key) {
        return root + "/" + LockNodes.encodeKey(key);
    }

    @Test
    void grantsReentersAndReleasesWithoutLeavingNodes() throws Exception {
        LockClient c = client();
        assertThat(c.backend()).isEqualTo("zookeeper");
        try (LockLease lease = c.lock("plain").acquire(Duration.ofSeconds(5))) {
            assertThat(lease.fencingToken()).isPositive();
            assertThat(ZooKeeperTestSupport.children(admin, path("plain"))).hasSize(1);
            try (LockLease again = c.lock("plain").acquire(Duration.ofSeconds(5))) {
                assertThat(again.holdCount()).isEqualTo(2);
            }
            assertThat(lease.isValid()).isTrue();
        }
        assertThat(ZooKeeperTestSupport.children(admin, path("plain"))).isEmpty();
    }

    @Test
    void waitersAreGrantedInArrivalOrderAndTokensRise() throws Exception {
        LockClient holder = client();
        LockLease first = holder.lock("fifo").acquire(Duration.ofSeconds(5));
        List<Integer> order = new CopyOnWriteArrayList<>();
        List<Long> tokens = new CopyOnWriteArrayList<>();
        tokens.add(first.fencingToken());
        List<Future<?>> waiters = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            int id = i;
            LockClient c = client();
            waiters.add(threads.submit(() -> {
                try (LockLease lease = c.lock("fifo").acquire(Duration.ofSeconds(30))) {
                    order.add(id);
                    tokens.add(lease.fencingToken());
                }
                return null;
            }));
            int queued = i + 2;
            await().atMost(Duration.ofSeconds(5))
                    .until(() ->
                            ZooKeeperTestSupport.children(admin, path("fifo")).size() == queued);
        }
        first.release();
        for (Future<?> f : waiters) {
            f.get(30, TimeUnit.SECONDS);
        }
        assertThat(order).containsExactly(0, 1, 2, 3);
        assertThat(tokens).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void abandonedWaitersLeaveNoNodes() throws Exception {
        LockClient holder = client();
        LockClient other = client();
        try (LockLease lease = holder.lock("abandon").acquire(Duration.ofSeconds(5))) {
            assertThat(other.lock("abandon").tryAcquire()).isEmpty();
            assertThat(other.lock("abandon").tryAcquire(Duration.ofMillis(300))).isEmpty();
            AtomicReference<Thread> waiter = new AtomicReference<>();
            Future<?> interrupted = threads.submit(() -> {
                waiter.set(Thread.currentThread());
                other.lock("abandon").acquire(Duration.ofSeconds(30));
                return null;
            });
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> ZooKeeperTestSupport.children(admin, path("abandon"))
                                    .size()
                            == 2);
            long start = System.nanoTime();
            waiter.get().interrupt();
            assertThatThrownBy(() -> interrupted.get(5, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(InterruptedException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(1));
            assertThat(ZooKeeperTestSupport.children(admin, path("abandon"))).hasSize(1);
            assertThat(lease.isValid()).isTrue();
        }
    }

    @Test
    void awkwardKeysWorkAndNeverCollide() throws Exception {
        LockClient c = client();
        List<String> keys = List.of(
                "/",
                ".",
                "..",
                "a/b",
                "a%2Fb",
                "a.b",
                "zookeeper",
                " spaced key\t",
                "ключ-キー-🔒",
                "x".repeat(1024),
                "é".repeat(1024),
                "🔒".repeat(512),
                "quotes'\"`;--",
                "%",
                "%25");
        List<LockLease> leases = new ArrayList<>();
        for (String key : keys) {
            leases.add(c.lock(key).acquire(Duration.ofSeconds(5)));
        }
        LockClient other = client();
        for (String key : keys) {
            assertThat(other.lock(key).tryAcquire()).as("key %s", key).isEmpty();
        }
        assertThat(keys.stream().map(LockNodes::encodeKey).distinct()).hasSameSizeAs(keys);
        leases.forEach(LockLease::release);
        for (String key : keys) {
            Optional<LockLease> l = other.lock(key).tryAcquire();
            assertThat(l).as("key %s", key).isPresent();
            l.get().release();
        }
    }

    @Test
    void deletedHolderNodeIsDetectedAndNextWaiterGranted() throws Exception {
        LockClient holder = client();
        LockClient waiter = client();
        LockLease lease = holder.lock("deleted").acquire(Duration.ofSeconds(5));
        CompletableFuture<LockLostException> lost = new CompletableFuture<>();
        lease.onLost(lost::complete);
        Future<Long> next = threads.submit(() -> {
            try (LockLease l = waiter.lock("deleted").acquire(Duration.ofSeconds(30))) {
                return l.fencingToken();
            }
        });
        await().atMost(Duration.ofSeconds(5))
                .until(() ->
                        ZooKeeperTestSupport.children(admin, path("deleted")).size() == 2);
        String holderNode = ZooKeeperTestSupport.children(admin, path("deleted")).stream()
                .min(java.util.Comparator.comparing(n -> n.substring(n.length() - 10)))
                .orElseThrow();
        admin.delete().forPath(path("deleted") + "/" + holderNode);
        assertThat(lost.get(5, TimeUnit.SECONDS)).isNotNull();
        assertThat(lease.isValid()).isFalse();
        assertThat(next.get(5, TimeUnit.SECONDS)).isGreaterThan(lease.fencingToken());
        assertThatThrownBy(lease::release).isInstanceOf(LockLostException.class);
    }

    @Test
    void expiredSessionLosesTheLeaseAndFreesTheLockAtOnce() throws Exception {
        // A 10 s session: the loss must be seen from the store's expiry (a reconnect, up to a second of ZooKeeper's
        // reconnect delay), well before the client's own session bound would end the lease.
        LockClient holder = client(10_000);
        LockClient waiter = client(10_000);
        LockLease lease = holder.lock("expired").acquire(Duration.ofSeconds(5));
        CompletableFuture<LockLostException> lost = new CompletableFuture<>();
        lease.onLost(lost::complete);
        Future<Long> next = threads.submit(() -> {
            try (LockLease l = waiter.lock("expired").acquire(Duration.ofSeconds(30))) {
                return l.fencingToken();
            }
        });
        await().atMost(Duration.ofSeconds(5))
                .until(() ->
                        ZooKeeperTestSupport.children(admin, path("expired")).size() == 2);
        long start = System.nanoTime();
        ZooKeeperTestSupport.expireSession(
                ZooKeeperTestSupport.backendOf(holder).curator(), server.connectString());
        assertThat(next.get(5, TimeUnit.SECONDS)).isGreaterThan(lease.fencingToken());
        assertThat(lost.get(5, TimeUnit.SECONDS)).isNotNull();
        assertThat(lease.isValid()).isFalse();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
        assertThatThrownBy(lease::release).isInstanceOf(LockLostException.class);
        // The client works again on its new session.
        try (LockLease again = holder.lock("expired").acquire(Duration.ofSeconds(10))) {
            assertThat(again.isValid()).isTrue();
        }
    }

    @Test
    void closingTheClientFailsWaitersPromptlyAndLeavesNothing() throws Exception {
        LockClient holder = client();
        LockClient closing = client();
        try (LockLease lease = holder.lock("close").acquire(Duration.ofSeconds(5))) {
            Future<?> waiting = threads.submit(() -> closing.lock("close").acquire(Duration.ofSeconds(30)));
            await().atMost(Duration.ofSeconds(5))
                    .until(() ->
                            ZooKeeperTestSupport.children(admin, path("close")).size() == 2);
            long start = System.nanoTime();
            closing.close();
            assertThatThrownBy(() -> waiting.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(IllegalStateException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
            assertThat(ZooKeeperTestSupport.children(admin, path("close"))).hasSize(1);
        }
    }

    @Test
    void usingAnApplicationsCuratorClientLeavesItOpen() throws Exception {
        try (LockClient c = ZooKeeperLocks.using(admin, root + "/using")) {
            try (LockLease lease = c.lock("k").acquire(Duration.ofSeconds(5))) {
                assertThat(lease.fencingToken()).isPositive();
            }
        }
        assertThat(admin.getZookeeperClient().isConnected()).isTrue();
    }

    @Test
    void badUrlsAreRejectedBeforeAnyIo() {
        assertThatThrownBy(() -> Locks.open("zookeeper://127.0.0.1:1/x?sessionTimeoutMs=abc"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("sessionTimeoutMs");
        assertThatThrownBy(() -> Locks.open("zookeeper://127.0.0.1:1/x?leaseMs=1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseMs");
        assertThatThrownBy(() -> Locks.open("zookeeper:///x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Locks.open("zookeeper://127.0.0.1:1/zookeeper/x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("reserves");
        long start = System.nanoTime();
        assertThatThrownBy(() -> Locks.open("zookeeper://127.0.0.1:1/x?connectionTimeoutMs=500"))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("connectionTimeoutMs");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
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

    /**
     * ZooKeeper numbers a key's nodes by a signed 32-bit counter of the key's parent node, which reaches its end after
     * 2<sup>31</sup> creates and deletes (weeks of {@code tryAcquire()} polling on a key held for that long): ZooKeeper
     * 3.9 then gives every new node the same number, older servers negative numbers and, later, small ones again.
     * Locks stay exclusive and in arrival order: attempts fail loudly near the end. The test moves the server's
     * counter there instead of counting up to it.
     */
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
        await().during(Duration.ofMillis(200))
                .atMost(Duration.ofSeconds(2))
                .until(() -> held.isValid() && order.isEmpty()); // nobody granted while the first holder holds

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
