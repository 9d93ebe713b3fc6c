package org.locksmith.lock.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.postgres.internal.PostgresLockBackend;
import org.locksmith.lock.spi.LockUrl;
import org.locksmith.lock.tck.LockFaults;
import org.locksmith.lock.tck.LockTck;
import org.locksmith.lock.tck.TckTimings;
import org.locksmith.lock.testservers.PrivatePostgres;

/**
 * The whole TCK against a private PostgreSQL server that this class starts from the machine's binaries, with every
 * fault: a holder's session terminated ({@code pg_terminate_backend}), a key's state deleted (its row, and the session
 * holding its lock terminated, as an operator would), a crash restart, a restart with an empty data directory, and an
 * outage (every server process stopped with SIGSTOP, then continued).
 */
class PostgresTckTest extends LockTck {
    private static final PrivatePostgres SERVER =
            PrivatePostgres.start(TckTimings.defaults().sessionTimeout().toSeconds());
    private static final String TABLE =
            "tck_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    /** Every client of this class names itself so, so that the server can count their sessions. */
    private static final String APPLICATION = "locksmith-" + TABLE;

    private static final Map<LockClient, PostgresLockBackend> BACKENDS = new ConcurrentHashMap<>();

    private String url(long timeoutMs) {
        TckTimings t = timings();
        return SERVER.url() + "?table=" + TABLE
                + "&checkIntervalMs=" + t.sessionTimeout().toMillis() / 10
                + "&sessionTimeoutMs=" + t.sessionTimeout().toMillis()
                + "&timeoutMs=" + timeoutMs
                + "&poolSize=24"
                + "&applicationName=" + APPLICATION;
    }

    @Override
    protected LockClient newClient() {
        PostgresLockBackend backend = (PostgresLockBackend) new PostgresLockProvider()
                .open(LockUrl.parse(url(timings().operationTimeout().toMillis())));
        LockClient client = Locks.client(backend);
        BACKENDS.put(client, backend);
        return client;
    }

    @Override
    protected Optional<String> workerUrl() {
        // a worker JVM's first connection loads the driver cold: more than the 2 s operation timeout on a busy machine
        return Optional.of(url(15_000));
    }

    @Override
    protected LockFaults faults() {
        return new LockFaults() {
            @Override
            public Set<Fault> supported() {
                return EnumSet.allOf(Fault.class);
            }

            @Override
            public void killSession(LockClient client) {
                PostgresLockBackend backend = BACKENDS.get(client);
                for (int pid : backend.heldSessionPids()) {
                    admin("SELECT pg_terminate_backend(" + pid + ")");
                }
            }

            @Override
            public void deleteLockState(String key) {
                admin(
                        "SELECT pg_terminate_backend(l.pid) FROM pg_locks l JOIN " + TABLE + " t ON " + holds("l", "t")
                                + " WHERE t.key_hash = ?",
                        sha256(key));
                admin("DELETE FROM " + TABLE + " WHERE key_hash = ?", sha256(key));
            }

            @Override
            public void restartStore() {
                SERVER.crash();
                SERVER.restart();
            }

            /** A restart with an empty data directory, and the schema created again by a new client. */
            @Override
            public void restartStoreEmpty() {
                SERVER.restartEmpty();
                try (LockClient schema = newClient()) {
                    schema.lock("schema").tryAcquire().ifPresent(LockLease::release);
                }
            }

            @Override
            public Outage beginOutage() {
                SERVER.pause();
                return SERVER::resume;
            }
        };
    }

    /** The advisory lock {@code l} (a row of pg_locks) is the lock of key row {@code t}. */
    private static String holds(String l, String t) {
        return l + ".locktype = 'advisory' AND " + l + ".objsubid = 1 AND ((" + l + ".classid::bigint << 32) | " + l
                + ".objid::bigint) = " + t + ".id";
    }

    /** Advisory locks held or waited for on the key, and its row in the key table. */
    @Override
    protected OptionalInt storeEntries(String key) {
        return OptionalInt.of((int) count(
                "SELECT (SELECT count(*) FROM pg_locks l JOIN " + TABLE + " t ON " + holds("l", "t")
                        + " WHERE t.key_hash = ?)"
                        + " + (SELECT count(*) FROM " + TABLE + " WHERE key_hash = ?)",
                sha256(key),
                sha256(key)));
    }

    /** The sessions of this class's clients, as the server sees them. */
    @Override
    protected OptionalInt openConnections() {
        return OptionalInt.of(
                (int) count("SELECT count(*) FROM pg_stat_activity WHERE application_name = ?", APPLICATION));
    }

    /**
     * The transactions the server has counted in the test database (every statement of an autocommit session is
     * one). The server publishes a session's counts at most once a second while it is busy, so a count lags by up to
     * a second: a poller still shows, an idle waiter counts nothing.
     */
    @Override
    protected OptionalLong storeOperations() {
        return OptionalLong.of(
                count("SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"));
    }

    /**
     * Not a TCK contract: PostgreSQL may grant a waiting advisory lock and still fail the statement with the wait's
     * {@code lock_timeout} (55P03), raised at the waiter's next interrupt check, and a session-level advisory lock
     * outlives the failed statement. A wait longer than one server-side wait is several; here each is 1 s. The
     * waiter's server process is stopped until its first wait's timeout has passed, the holder releases (the server
     * grants the lock to the stopped waiter), and the waiter continues: its first wait fails after the grant, its next
     * one is granted, and its release must free the key, which it does not if the session took the lock twice.
     */
    @Test
    void aLockTimeoutRaisedAfterTheGrantLeavesNothingHeld() throws Exception {
        String key = "timeout-after-grant-" + UUID.randomUUID();
        try (LockClient holder = newClient();
                LockClient waiter = newClient()) {
            BACKENDS.get(waiter).limitServerWaitsForTests(Duration.ofSeconds(1));
            LockLease held = holder.lock(key).acquire(Duration.ofSeconds(5));
            CompletableFuture<Long> waiting = CompletableFuture.supplyAsync(() -> {
                try (LockLease lease = waiter.lock(key).acquire(Duration.ofSeconds(20))) {
                    return lease.fencingToken();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            long pid = waitingSession(key);
            SERVER.pauseProcess(pid);
            try {
                Thread.sleep(1500); // no event to wait for: the stopped waiter's lock_timeout (1 s) runs out
                held.release(); // granted by the server to the stopped waiter
            } finally {
                SERVER.resumeProcess(pid);
            }
            assertThat(waiting.get(20, TimeUnit.SECONDS))
                    .as("the waiter's token, granted after its first server-side wait failed")
                    .isGreaterThan(held.fencingToken());
            assertThat(holder.lock(key).tryAcquire().map(lease -> {
                        lease.release();
                        return true;
                    }))
                    .as("tryAcquire after the waiter released")
                    .isPresent();
        }
    }

    /**
     * Not a TCK contract: a token that the server clock does not cover survives a crash. A key's counter can run
     * ahead of the server clock (the clock was set back, or a failover went to a server whose clock is behind); such a
     * token must be on disk before the grant, or a crash that loses the last commits issues it again. The counter is
     * set an hour ahead, a grant takes the next token, and the server is killed at once (SIGKILL, before its WAL
     * writer's next flush) and started again on its data.
     */
    @Test
    void aTokenAheadOfTheServerClockSurvivesACrash() throws Exception {
        String key = "token-ahead-of-clock-" + UUID.randomUUID();
        long ahead;
        // The WAL writer flushes asynchronous commits every 200 ms by default: 10 s, so that only a flush the commit
        // waits for puts the token on disk before the crash.
        admin("ALTER SYSTEM SET wal_writer_delay = '10s'");
        admin("SELECT pg_reload_conf()");
        try (LockClient client = newClient()) {
            client.lock(key).acquire(Duration.ofSeconds(5)).release(); // the key's row
            ahead = (System.currentTimeMillis() + 3_600_000L) * 1000;
            admin("UPDATE " + TABLE + " SET token = ? WHERE key_hash = ?", ahead, sha256(key));
            LockLease lease = client.lock(key).acquire(Duration.ofSeconds(5));
            assertThat(lease.fencingToken()).isEqualTo(ahead + 1);
            SERVER.crash();
            SERVER.restart();
        } finally {
            admin("ALTER SYSTEM RESET wal_writer_delay");
            admin("SELECT pg_reload_conf()");
        }
        SERVER.awaitUptime(timings().sessionTimeout().toSeconds());
        try (LockClient client = newClient();
                LockLease lease = client.lock(key).acquire(Duration.ofSeconds(10))) {
            assertThat(lease.fencingToken())
                    .as("the token after a crash right after a grant whose token was ahead of the clock")
                    .isGreaterThan(ahead + 1);
        }
    }

    /** The server process of the session waiting for the key's advisory lock (waits up to 5 s for it to wait). */
    private static long waitingSession(String key) {
        String sql = "SELECT coalesce(max(l.pid), 0) FROM pg_locks l JOIN " + TABLE + " t ON " + holds("l", "t")
                + " WHERE t.key_hash = ? AND NOT l.granted";
        return await("a session waiting for key '" + key + "'")
                .atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(10))
                .until(() -> count(sql, sha256(key)), pid -> pid != 0);
    }

    /** A server restarted by an earlier test grants nothing for the restart hold-off (the TCK's session timeout). */
    @BeforeEach
    void serverUpForTheRestartHoldOff() {
        SERVER.awaitUptime(timings().sessionTimeout().toSeconds());
    }

    @AfterAll
    static void stopServer() {
        SERVER.close();
    }

    static byte[] sha256(String key) {
        try {
            return java.security.MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static long count(String sql, Object... parameters) {
        try (Connection c = DriverManager.getConnection(SERVER.jdbcUrl(), "postgres", "");
                PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                ps.setObject(i + 1, parameters[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            if ("42P01".equals(e.getSQLState())) {
                return 0; // the table is not created yet: nothing stored
            }
            throw new IllegalStateException(e);
        }
    }

    private static void admin(String sql, Object... parameters) {
        try (Connection c = DriverManager.getConnection(SERVER.jdbcUrl(), "postgres", "");
                PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                ps.setObject(i + 1, parameters[i]);
            }
            ps.execute();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
