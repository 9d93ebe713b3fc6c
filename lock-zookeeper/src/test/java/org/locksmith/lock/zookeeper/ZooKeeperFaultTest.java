package org.locksmith.lock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.Locks;

/**
 * Faults on a private server: a holder JVM killed with SIGKILL, the server restarted while a lock is held, and the
 * server stopped for a while. Session expiry by the server is covered in {@link ZooKeeperLockTest}.
 */
class ZooKeeperFaultTest {
    static final long SESSION_MS = 2_000;

    private static EmbeddedZooKeeper server;
    private static String root;
    private final List<LockClient> clients = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void start() {
        server = new EmbeddedZooKeeper();
        root = ZooKeeperTestSupport.uniqueRoot("fault");
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    @AfterEach
    void closeClients() {
        clients.forEach(LockClient::close);
    }

    private LockClient client() {
        LockClient c = Locks.open(server.url(root, SESSION_MS, 2_000));
        clients.add(c);
        return c;
    }

    @Test
    void killedHolderJvmFreesTheLockAfterItsSessionTimeout() throws Exception {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        Process holder = new ProcessBuilder(
                        java,
                        "-cp",
                        System.getProperty("java.class.path"),
                        HolderProcess.class.getName(),
                        server.url(root, SESSION_MS, 2_000),
                        "killed-jvm")
                .redirectErrorStream(true)
                .start();
        try {
            BufferedReader out =
                    new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
            CompletableFuture<Long> held = CompletableFuture.supplyAsync(() -> {
                try {
                    for (String line; (line = out.readLine()) != null; ) {
                        if (line.startsWith("HELD ")) {
                            return Long.parseLong(line.substring(5).trim());
                        }
                    }
                    throw new IllegalStateException("holder JVM ended without holding");
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            long workerToken = held.get(60, TimeUnit.SECONDS);
            LockClient waiter = client();
            assertThat(waiter.lock("killed-jvm").tryAcquire()).isEmpty();

            long killedAt = System.nanoTime();
            holder.destroyForcibly();
            assertThat(holder.waitFor(10, TimeUnit.SECONDS)).isTrue();
            try (LockLease lease = waiter.lock("killed-jvm").acquire(Duration.ofSeconds(30))) {
                Duration toGrant = Duration.ofNanos(System.nanoTime() - killedAt);
                System.out.printf(
                        "[zookeeper] killed holder JVM: next grant after %d ms (session timeout %d ms)%n",
                        toGrant.toMillis(), SESSION_MS);
                // The server expires a session its timeout after the last packet it heard (rounded up to a tick).
                // An idle client pings every third of the timeout, so the kill came up to a third after that
                // packet: the grant must come no sooner than about two thirds of the timeout (half, for slack),
                // which proves the session, not the closed socket, freed the lock, and not much later than it.
                assertThat(toGrant)
                        .isGreaterThanOrEqualTo(Duration.ofMillis(SESSION_MS / 2))
                        .isLessThan(Duration.ofMillis(SESSION_MS + 3_000));
                assertThat(lease.fencingToken()).isGreaterThan(workerToken);
            }
        } finally {
            holder.destroyForcibly();
        }
    }

    @Test
    void restartWhileHeldLosesTheLeaseAndTokensKeepRising() throws Exception {
        LockClient holder = client();
        LockLease lease = holder.lock("restart").acquire(Duration.ofSeconds(5));
        long before = lease.fencingToken();
        CompletableFuture<LockLostException> lost = new CompletableFuture<>();
        lease.onLost(lost::complete);

        server.restart();

        // The connection was SUSPENDED: the holder cannot prove it holds, so the lease is lost for good.
        assertThat(lost.get(10, TimeUnit.SECONDS).getMessage()).contains("SUSPENDED");
        assertThat(lease.isValid()).isFalse();
        // The session survived the restart (ZooKeeper logs sessions), so releasing deletes the node...
        assertThatThrownBy(lease::release).isInstanceOf(LockLostException.class);
        // ...and the key is free at once for another client, with a greater token.
        try (LockLease next = client().lock("restart").acquire(Duration.ofSeconds(10))) {
            assertThat(next.fencingToken()).isGreaterThan(before);
        }
        try (LockLease again = holder.lock("restart").acquire(Duration.ofSeconds(10))) {
            assertThat(again.isValid()).isTrue();
            assertThat(again.fencingToken()).isGreaterThan(before);
        }
    }

    @Test
    void outageFailsOperationsWithinTheConnectionTimeoutAndTheClientRecovers() throws Exception {
        LockClient c = client();
        LockLease held = c.lock("outage-held").acquire(Duration.ofSeconds(5));
        CompletableFuture<LockLostException> lost = new CompletableFuture<>();
        held.onLost(lost::complete);
        AutoCloseable outage = server.stop();
        try {
            assertThat(lost.get(10, TimeUnit.SECONDS)).isNotNull();
            long start = System.nanoTime();
            assertThatThrownBy(() -> c.lock("outage").acquire(Duration.ofSeconds(30)))
                    .isInstanceOf(LockBackendException.class);
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            assertThat(took).isLessThan(Duration.ofMillis(2_000 * 2 + 1_000));
        } finally {
            outage.close();
        }
        try (LockLease lease = c.lock("outage").acquire(Duration.ofSeconds(15))) {
            assertThat(lease.isValid()).isTrue();
        }
    }
}
