package org.locksmith.lock.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.testsupport.ForkedJUnit;

/**
 * {@code row}: waits that end on the client (cancelled futures, a client closed with waits pending, interrupted
 * virtual threads) end on the server too, at once, while the holder keeps its lock: no session of the waiting client
 * is left in InnoDB's lock queue, where it would wait until the holder commits (and then be granted a row nobody
 * wants) or until its {@code WAIT n} ends.
 */
class MySqlCancelledWaitTest {
    private static final String BASE_URL = MySqlTestServer.baseUrl();
    private static final String TABLE = MySqlTestServer.uniqueTable("cancelwait");
    /** Longer than any wait here: only a cancellation ends them. */
    static final Duration WAIT = Duration.ofSeconds(60);

    @AfterAll
    static void dropTable() {
        MySqlTestServer.dropTables(BASE_URL, TABLE);
    }

    static String url(String baseUrl, String table, int poolSize) {
        return baseUrl + "?table=" + table + "&poolSize=" + poolSize + "&timeoutMs=5000";
    }

    @Test
    void cancelledAsyncWaitsEndOnTheServerAtOnce() throws Exception {
        String key = "cancelwait:async:" + System.nanoTime();
        ServerWaits server = new ServerWaits(BASE_URL, TABLE);
        try (LockClient holder = MySqlTckSupport.open(url(BASE_URL, TABLE, 2));
                LockClient waiter = MySqlTckSupport.open(url(BASE_URL, TABLE, 16));
                LockLease held = holder.lock(key).acquire(Duration.ofSeconds(5))) {
            List<CompletableFuture<LockLease>> waits = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                waits.add(waiter.lock(key).acquireAsync(WAIT));
            }
            server.awaitLockWaits(12, Duration.ofSeconds(20));
            long cancelled = System.nanoTime();
            waits.forEach(w -> w.cancel(false));
            long ms = server.awaitNoRunningLockRead(cancelled, Duration.ofMillis(500));
            server.awaitNoLockReadTransaction(Duration.ofSeconds(1));
            System.out.println("12 cancelled row waits ended on the server after " + ms + " ms");
            assertThat(waits).allMatch(CompletableFuture::isCancelled);
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void closeEndsPendingAsyncWaitsOnTheServerAtOnce() throws Exception {
        String key = "cancelwait:close:" + System.nanoTime();
        ServerWaits server = new ServerWaits(BASE_URL, TABLE);
        try (LockClient holder = MySqlTckSupport.open(url(BASE_URL, TABLE, 2));
                LockLease held = holder.lock(key).acquire(Duration.ofSeconds(5))) {
            LockClient waiter = MySqlTckSupport.open(url(BASE_URL, TABLE, 20));
            List<CompletableFuture<LockLease>> waits = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                waits.add(waiter.lock(key).acquireAsync(WAIT));
            }
            server.awaitLockWaits(16, Duration.ofSeconds(20));
            long closing = System.nanoTime();
            waiter.close();
            long ms = server.awaitNoRunningLockRead(closing, Duration.ofMillis(500));
            server.awaitNoLockReadTransaction(Duration.ofSeconds(1));
            System.out.println("close() ended 16 pending row waits on the server after " + ms + " ms");
            assertThat(waits).allMatch(CompletableFuture::isCompletedExceptionally);
            assertThat(held.isValid()).isTrue();
        }
    }

    /**
     * The same on virtual threads (Java 21+, in a JVM of its own: {@link CancelledWaitsOnVirtualThreads}), where an
     * interrupt closes the socket of a connection in use, so a wait may end on the client before its {@code KILL
     * QUERY} reaches the server: then nothing but the server's own bounds would end it there.
     */
    @Test
    void interruptedAndClosedWaitsOnVirtualThreadsEndOnTheServerAtOnce() throws Exception {
        Optional<ForkedJUnit.Jdk> jdk = ForkedJUnit.newestJdk(21);
        Assumptions.assumeTrue(
                jdk.isPresent(),
                "virtual threads not checked: no Java 21+ found on this machine; install one or set"
                        + " LOCKSMITH_TEST_JAVA to its home");
        ForkedJUnit.Result r = ForkedJUnit.run(
                jdk.get().java(),
                CancelledWaitsOnVirtualThreads.class,
                Map.of(CancelledWaitsOnVirtualThreads.BASE_URL_PROPERTY, BASE_URL),
                Duration.ofMinutes(3),
                Path.of("target", "forked-junit", "CancelledWaitsOnVirtualThreads.log"));
        System.out.println(r.tail(20));
        assertThat(r.exitCode() == 0 && r.failed() == 0 && r.succeeded() == 2)
                .as("CancelledWaitsOnVirtualThreads on %s:%n%s", jdk.get().java(), r.tail(80))
                .isTrue();
    }
}
