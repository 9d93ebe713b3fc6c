package org.locksmith.lock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
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
import org.locksmith.lock.zookeeper.internal.LockNodes;

/**
 * Outages longer than the connection timeout but shorter than the session, on a private server that grants long
 * sessions: the sessions, and with them the lock nodes, survive, so what the backend does during the outage decides
 * what is left when the server comes back.
 */
class ZooKeeperOutageTest {
    static final long SESSION_MS = 10_000;
    static final long CONNECTION_MS = 500;
    /** Longer than the connection timeout, much shorter than the session. */
    static final long OUTAGE_MS = 3 * CONNECTION_MS;

    private static EmbeddedZooKeeper server;
    private static CuratorFramework admin;
    private static String root;
    private final List<LockClient> clients = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void start() {
        server = EmbeddedZooKeeper.withMaxSessionTimeout((int) SESSION_MS);
        admin = ZooKeeperTestSupport.admin(server.connectString());
        root = ZooKeeperTestSupport.uniqueRoot("outage");
    }

    @AfterAll
    static void stop() throws Exception {
        admin.close();
        server.close();
    }

    @AfterEach
    void closeClients() {
        clients.forEach(LockClient::close);
    }

    private LockClient client(long sessionMs) {
        LockClient c = Locks.open(server.url(root, sessionMs, CONNECTION_MS));
        clients.add(c);
        return c;
    }

    private static String path(String key) {
        return root + "/" + LockNodes.encodeKey(key);
    }

    private static CuratorFramework curatorOf(LockClient client) {
        return ZooKeeperTestSupport.backendOf(client).curator();
    }

    private static long sessionId(LockClient client) throws Exception {
        return curatorOf(client).getZookeeperClient().getZooKeeper().getSessionId();
    }

    private static void awaitConnected(LockClient... clients) {
        for (LockClient c : clients) {
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> curatorOf(c).getZookeeperClient().isConnected());
        }
    }

    /** Stops the server for {@code ms} after {@code whileStopped} returns, counted from the stop. */
    private static void outage(long ms, ThrowingRunnable whileStopped) throws Exception {
        AutoCloseable outage = server.stop();
        long stoppedAt = System.nanoTime();
        try {
            whileStopped.run();
            long left = ms - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stoppedAt);
            if (left > 0) {
                TimeUnit.MILLISECONDS.sleep(left); // the outage's length, not a wait for a condition
            }
        } finally {
            outage.close();
        }
    }

    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    private static long millisSince(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    /**
     * A release that cannot reach ZooKeeper still sends its delete (Curator retries it until it succeeds), so the
     * key is free as soon as the server is back, not when the holder's session ends: while the holder's client is
     * open, that would be never.
     */
    @Test
    void releaseDuringAnOutageDeletesTheNodeWhenTheServerReturns() throws Exception {
        String key = "release-in-outage";
        LockClient holder = client(SESSION_MS);
        LockClient other = client(SESSION_MS);
        LockLease lease = holder.lock(key).acquire(Duration.ofSeconds(5));
        CompletableFuture<LockLostException> lost = new CompletableFuture<>();
        lease.onLost(lost::complete);
        long session = sessionId(holder);

        Throwable[] released = new Throwable[1];
        outage(OUTAGE_MS, () -> {
            assertThat(lost.get(10, TimeUnit.SECONDS).getMessage()).contains("SUSPENDED");
            long start = System.nanoTime();
            released[0] = catchThrowable(lease::release);
            // The documented outcome: the release cannot be confirmed within the connection timeout.
            assertThat(released[0]).isInstanceOf(LockBackendException.class);
            assertThat(millisSince(start)).isLessThan(CONNECTION_MS + 1_000);
        });

        awaitConnected(holder, other);
        long back = System.nanoTime();
        try (LockLease next = other.lock(key).acquire(Duration.ofSeconds(5))) {
            assertThat(next.isValid()).isTrue();
            System.out.printf(
                    "[zookeeper] release during an outage: key free %d ms after reconnection (session %d ms)%n",
                    millisSince(back), SESSION_MS);
        }
        // The holder's session survived the outage: the release freed the key, not the session's end.
        assertThat(sessionId(holder)).isEqualTo(session);
        assertThat(released[0]).hasMessageContaining("stays scheduled");
        assertThat(ZooKeeperTestSupport.children(admin, path(key))).isEmpty();
    }
}
