package org.locksmith.lock.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.testservers.PrivatePgBouncer;
import org.locksmith.lock.testservers.PrivatePgBouncer.PoolMode;
import org.locksmith.lock.testservers.TestPostgres;

/**
 * The backend behind a real PgBouncer ({@link PrivatePgBouncer}, in front of the test PostgreSQL): in session mode
 * every lock stays with its owner and waits, hand-offs and timeouts work as on a direct connection; in transaction
 * mode, where clients share server sessions between transactions, a client that lands on a session holding another
 * client's lock is refused with a message that names the pooler, and is never granted that lock.
 */
class PostgresPgBouncerTest {
    private static final String TABLE =
            "bouncer_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);

    /**
     * PgBouncer is the one tool the tests need that no Maven artifact brings: without it this class is skipped, with
     * a notice in the build output and the test report naming what to install.
     */
    @BeforeAll
    static void needsPgBouncer() {
        Optional<String> missing = PrivatePgBouncer.unavailable();
        missing.ifPresent(notice ->
                System.out.println("[WARNING] " + PostgresPgBouncerTest.class.getSimpleName() + ": " + notice));
        assumeTrue(missing.isEmpty(), () -> missing.orElseThrow());
    }

    @AfterAll
    static void dropTable() throws Exception {
        if (PrivatePgBouncer.unavailable().isPresent()) {
            return; // skipped: nothing was created
        }
        try (Connection c = DriverManager.getConnection(
                        TestPostgres.jdbcUrl(), TestPostgres.user(), TestPostgres.password());
                Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + TABLE);
            s.execute("DROP FUNCTION IF EXISTS " + TABLE + "_acquire");
        }
    }

    /** Advisory lock requests that wait in the test server (this class's waiter; classes run one at a time). */
    private static long waitingAdvisoryLocks() throws Exception {
        try (Connection c = DriverManager.getConnection(
                        TestPostgres.jdbcUrl(), TestPostgres.user(), TestPostgres.password());
                java.sql.ResultSet rs = c.createStatement()
                        .executeQuery("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static LockClient open(PrivatePgBouncer bouncer, int poolSize) {
        return Locks.open(bouncer.url() + "?table=" + TABLE + "&poolSize=" + poolSize + "&timeoutMs=5000");
    }

    @Test
    void sessionModeKeepsEachLockWithItsOwner() throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(6);
        try (PrivatePgBouncer bouncer = PrivatePgBouncer.start(PoolMode.SESSION, 12);
                LockClient a = open(bouncer, 4);
                LockClient b = open(bouncer, 4)) {
            String key = "bouncer-session-" + UUID.randomUUID();
            AtomicInteger inside = new AtomicInteger();
            AtomicInteger overlaps = new AtomicInteger();
            List<Long> tokens = java.util.Collections.synchronizedList(new ArrayList<>());
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < 6; t++) {
                LockClient client = t % 2 == 0 ? a : b;
                workers.add(threads.submit(() -> {
                    for (int i = 0; i < 40; i++) {
                        try (LockLease lease = client.lock(key).acquire(Duration.ofSeconds(20))) {
                            if (inside.incrementAndGet() != 1) {
                                overlaps.incrementAndGet();
                            }
                            tokens.add(lease.fencingToken());
                            Thread.sleep(1);
                            inside.decrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> w : workers) {
                w.get(60, TimeUnit.SECONDS);
            }
            assertThat(overlaps.get())
                    .as("grants that overlapped another holder")
                    .isZero();
            assertThat(tokens)
                    .as("tokens in grant order")
                    .hasSize(240)
                    .isSorted()
                    .doesNotHaveDuplicates();

            // a waiter blocked in the server is handed the lock at the release, through the pooler
            LockLease held = a.lock(key).acquire(Duration.ofSeconds(5));
            long[] releasedAt = new long[1];
            CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(
                    () -> {
                        try (LockLease lease = b.lock(key).acquire(Duration.ofSeconds(20))) {
                            return System.nanoTime();
                        } catch (InterruptedException e) {
                            throw new IllegalStateException(e);
                        }
                    },
                    threads);
            await("the waiter blocked in the server")
                    .atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> waitingAdvisoryLocks() > 0);
            assertThat(waiter).isNotDone();
            releasedAt[0] = System.nanoTime();
            held.release();
            long handoffMs = TimeUnit.NANOSECONDS.toMillis(waiter.get(10, TimeUnit.SECONDS) - releasedAt[0]);
            assertThat(handoffMs).as("hand-off through PgBouncer (ms)").isLessThan(1000);

            // a timed wait gives up on time (the driver's cancel request goes through the pooler) and keeps nothing
            held = a.lock(key).acquire(Duration.ofSeconds(5));
            long start = System.nanoTime();
            assertThat(b.lock(key).tryAcquire(Duration.ofMillis(300))).isEmpty();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(300L, 2000L);
            held.release();
            Optional<LockLease> after = b.lock(key).tryAcquire();
            assertThat(after)
                    .as("tryAcquire after the holder released, the timed-out waiter gone")
                    .isPresent();
            after.get().release();
        } finally {
            threads.shutdownNow();
        }
    }

    /**
     * One server session for every client, as transaction pooling may give with any pool size. Whichever statement
     * first shows the sharing (the second client's schema check meeting the first one's prepared statements, or an
     * acquire on a session holding another client's lock) fails with a message that names the pooler, and the held
     * key is never granted to the second client.
     */
    @Test
    void transactionModeIsRefusedClearly() throws Exception {
        String key = "bouncer-transaction-" + UUID.randomUUID();
        List<LockClient> clients = new ArrayList<>();
        LockBackendException refusal = null;
        try (PrivatePgBouncer bouncer = PrivatePgBouncer.start(PoolMode.TRANSACTION, 1)) {
            try {
                LockClient a = open(bouncer, 2);
                clients.add(a);
                LockLease held = a.lock(key).acquire(Duration.ofSeconds(5));
                LockClient b = open(bouncer, 2);
                clients.add(b);
                Optional<LockLease> second = b.lock(key).tryAcquire();
                assertThat(second)
                        .as("the held key, granted to a second client on the holder's server session")
                        .isEmpty();
                b.lock(key + "-other").acquire(Duration.ofSeconds(2)).release();
                held.release();
            } catch (LockBackendException e) {
                refusal = e;
            } finally {
                for (LockClient c : clients) {
                    c.close();
                }
            }
        }
        assertThat(refusal)
                .as("the refusal of a client behind PgBouncer in transaction mode")
                .isNotNull()
                .hasMessageContaining("transaction mode")
                .hasMessageContaining("use session pooling");
    }
}
