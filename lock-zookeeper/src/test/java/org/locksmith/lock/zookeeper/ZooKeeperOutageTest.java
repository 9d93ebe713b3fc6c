package org.locksmith.lock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
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
import org.locksmith.lock.LockTimeoutException;
import org.locksmith.lock.testservers.EmbeddedZooKeeper;
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
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "zk-outage-test");
        t.setDaemon(true);
        return t;
    });

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
    void closeClients() throws Exception {
        threads.shutdownNow();
        clients.forEach(LockClient::close);
        assertThat(threads.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    private LockClient client(long sessionMs) {
        LockClient c = ZooKeeperTestSupport.open(server.url(root, sessionMs, CONNECTION_MS));
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

    /** The lock nodes of {@code key}, in queue order. */
    private static List<String> queue(String key) {
        List<String> nodes = new ArrayList<>(ZooKeeperTestSupport.children(admin, path(key)));
        nodes.sort(Comparator.comparing(n -> n.substring(n.length() - 10)));
        return nodes;
    }

    private void awaitQueueLength(String key, int length) {
        await().atMost(Duration.ofSeconds(10)).until(() -> queue(key).size() == length);
    }

    /** What {@code future} threw, or null if it completed normally. */
    private static Throwable failureOf(Future<?> future, long timeoutMs) throws Exception {
        try {
            future.get(timeoutMs, TimeUnit.MILLISECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        }
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
            // suspended: invalid, not lost (the session outlives the outage)
            await().atMost(Duration.ofSeconds(10)).until(() -> !lease.isValid());
            assertThat(lost).isNotDone();
            long start = System.nanoTime();
            released[0] = catchThrowable(lease::release);
            // The documented outcome: the release cannot be confirmed within the connection timeout.
            assertThat(released[0]).isInstanceOf(LockBackendException.class);
            assertThat(millisSince(start)).isLessThan(CONNECTION_MS + 2_000);
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

    /**
     * Closing a client during an outage releases its leases at once, each waiting at most the connection timeout
     * for a connection: the close costs about one connection timeout, not one per held lease.
     */
    @Test
    void closeDuringAnOutageCostsAboutOneConnectionTimeoutWhateverTheLeases() throws Exception {
        LockClient holder = client(SESSION_MS);
        List<LockLease> leases = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            leases.add(holder.lock("close-in-outage-" + i).acquire(Duration.ofSeconds(5)));
        }
        outage(OUTAGE_MS, () -> {
            await().atMost(Duration.ofSeconds(10)).until(() -> !leases.get(0).isValid());
            long start = System.nanoTime();
            holder.close();
            long took = millisSince(start);
            System.out.printf(
                    "[zookeeper] close with 12 leases during an outage: %d ms (connection timeout %d ms)%n",
                    took, CONNECTION_MS);
            // one release after another would take 12 connection timeouts (6 s); closing the Curator client
            // during the outage takes up to about a second of its own
            assertThat(took).isLessThan(CONNECTION_MS + 2_500);
        });
        assertThat(leases).noneMatch(LockLease::isValid);
    }

    /**
     * Waiters queued when the server stops keep their nodes, and so their places, through an outage longer than the
     * connection timeout but shorter than their sessions, and are granted in order once it ends. A waiter whose own
     * deadline passes during the outage gives up at its deadline, not earlier with a backend failure and not later,
     * and its node is deleted when the server is back.
     */
    @Test
    void queuedWaitersKeepTheirPlaceThroughAnOutageShorterThanTheirSession() throws Exception {
        String key = "waiters-in-outage";
        LockClient holder = client(SESSION_MS);
        LockLease lease = holder.lock(key).acquire(Duration.ofSeconds(5));
        List<Integer> order = new CopyOnWriteArrayList<>();
        List<String> grantedNodes = new CopyOnWriteArrayList<>();
        List<Future<?>> waiters = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            int id = i;
            LockClient c = client(SESSION_MS);
            waiters.add(threads.submit(() -> {
                try (LockLease l = c.lock(key).acquire(Duration.ofSeconds(60))) {
                    order.add(id);
                    grantedNodes.add(queue(key).get(0));
                }
                return null;
            }));
            awaitQueueLength(key, i + 2);
        }
        List<String> queuedBefore = queue(key);
        long deadlineMs = 4 * CONNECTION_MS;
        LockClient impatient = client(SESSION_MS);
        long impatientStart = System.nanoTime();
        Future<?> shortDeadline = threads.submit(() -> impatient.lock(key).acquire(Duration.ofMillis(deadlineMs)));
        awaitQueueLength(key, 4);

        outage(deadlineMs + 2 * CONNECTION_MS, () -> {
            Throwable gaveUp = failureOf(shortDeadline, deadlineMs + 10_000);
            long took = millisSince(impatientStart);
            assertThat(gaveUp)
                    .as("a waiter whose deadline passes during the outage times out, after %d ms", took)
                    .isInstanceOf(LockTimeoutException.class);
            // Not much later than its deadline: a call that was out when the connection dropped can take up to
            // the ZooKeeper client's reconnection back-off (about a second) to fail, plus scheduling slack on two
            // cores.
            assertThat(took).isBetween(deadlineMs, deadlineMs + 2_500);
            assertThat(waiters).as("waiters with time left are still waiting").noneMatch(Future::isDone);
        });
        assertThat(waiters).as("waiters kept waiting through the outage").noneMatch(Future::isDone);

        awaitConnected(holder);
        // The holder's lease was suspended through the outage and is valid again: its session and node survived.
        await().atMost(Duration.ofSeconds(10)).until(lease::isValid);
        lease.release();
        for (Future<?> w : waiters) {
            w.get(15, TimeUnit.SECONDS);
        }
        assertThat(order).containsExactly(0, 1);
        assertThat(grantedNodes)
                .as("each waiter was granted on the node it had queued with before the outage")
                .containsExactly(queuedBefore.get(1), queuedBefore.get(2));
        await().atMost(Duration.ofSeconds(10)).until(() -> queue(key).isEmpty());
    }

    /**
     * A waiter whose session ends during the outage has lost its place; it then fails like a new attempt: with a
     * {@link LockBackendException} once no connection comes within the connection timeout. So it never hangs, and
     * it never waits much longer than its session and connection timeouts together, whatever its deadline.
     */
    @Test
    void aWaiterWhoseSessionEndsInTheOutageFailsWithinItsSessionAndConnectionTimeouts() throws Exception {
        String key = "session-ends-in-outage";
        long shortSessionMs = 4_000; // well above what a failure after the connection timeout takes (~1.4 s)
        LockClient holder = client(SESSION_MS);
        LockLease lease = holder.lock(key).acquire(Duration.ofSeconds(5));
        LockClient waiter = client(shortSessionMs);
        Future<?> waiting = threads.submit(() -> waiter.lock(key).acquire(Duration.ofSeconds(60)));
        awaitQueueLength(key, 2);

        long[] failedAfter = new long[1];
        outage(0, () -> {
            long start = System.nanoTime();
            Throwable failed = failureOf(waiting, 30_000);
            failedAfter[0] = millisSince(start);
            assertThat(failed).isInstanceOf(LockBackendException.class);
        });
        System.out.printf(
                "[zookeeper] waiter in an outage: failed after %d ms (session %d ms, connection timeout %d ms)%n",
                failedAfter[0], shortSessionMs, CONNECTION_MS);
        // It kept its place while its session could survive, and gave up soon after the session ended: within the
        // session and connection timeouts plus the ZooKeeper client's reconnection back-off (about a second) and
        // scheduling slack on a loaded machine (a CI run on two cores took 6,116 ms against a 6,000 ms bound).
        assertThat(failedAfter[0]).isBetween(shortSessionMs * 3 / 4, shortSessionMs + CONNECTION_MS + 3_000);

        awaitConnected(holder, waiter);
        await().atMost(Duration.ofSeconds(10)).until(lease::isValid); // the holder's session survived
        lease.release();
        try (LockLease again = waiter.lock(key).acquire(Duration.ofSeconds(10))) {
            assertThat(again.isValid()).isTrue();
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> queue(key).isEmpty());
    }
}
