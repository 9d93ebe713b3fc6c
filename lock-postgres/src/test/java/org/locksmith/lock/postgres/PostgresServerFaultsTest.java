package org.locksmith.lock.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.postgres.internal.PostgresLockBackend;
import org.locksmith.lock.spi.LockUrl;
import org.locksmith.lock.testservers.PrivatePostgres;

/**
 * PostgreSQL behaviour below the TCK's contracts, on a private server that this class stops and crashes: a wait's
 * {@code lock_timeout} raised after the server granted the lock, and a token ahead of the server clock across a
 * crash. (Kept out of {@link PostgresTckTest}, whose run is the kit's alone.)
 */
class PostgresServerFaultsTest {
    /** The clients' session timeout, and the restart hold-off the server is given (whole seconds). */
    private static final long SESSION_SECONDS = 2;

    private static final PrivatePostgres SERVER = PrivatePostgres.start(SESSION_SECONDS);
    private static final String TABLE =
            "faults_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);

    private final Map<LockClient, PostgresLockBackend> backends = new ConcurrentHashMap<>();

    private LockClient newClient() {
        PostgresLockBackend backend = (PostgresLockBackend) new PostgresLockProvider()
                .open(LockUrl.parse(SERVER.url() + "?table=" + TABLE + "&checkIntervalMs=" + SESSION_SECONDS * 100
                        + "&sessionTimeoutMs=" + SESSION_SECONDS * 1000 + "&timeoutMs=2000"));
        LockClient client = Locks.client(backend);
        backends.put(client, backend);
        return client;
    }

    /**
     * PostgreSQL may grant a waiting advisory lock and still fail the statement with the wait's
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
            backends.get(waiter).limitServerWaitsForTests(Duration.ofSeconds(1));
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
     * A token that the server clock does not cover survives a crash. A key's counter can run
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
        ServerSql.admin(SERVER, "ALTER SYSTEM SET wal_writer_delay = '10s'");
        ServerSql.admin(SERVER, "SELECT pg_reload_conf()");
        try (LockClient client = newClient()) {
            client.lock(key).acquire(Duration.ofSeconds(5)).release(); // the key's row
            ahead = (System.currentTimeMillis() + 3_600_000L) * 1000;
            ServerSql.admin(
                    SERVER, "UPDATE " + TABLE + " SET token = ? WHERE key_hash = ?", ahead, ServerSql.sha256(key));
            LockLease lease = client.lock(key).acquire(Duration.ofSeconds(5));
            assertThat(lease.fencingToken()).isEqualTo(ahead + 1);
            SERVER.crash();
            SERVER.restart();
        } finally {
            ServerSql.admin(SERVER, "ALTER SYSTEM RESET wal_writer_delay");
            ServerSql.admin(SERVER, "SELECT pg_reload_conf()");
        }
        SERVER.awaitUptime(SESSION_SECONDS);
        try (LockClient client = newClient();
                LockLease lease = client.lock(key).acquire(Duration.ofSeconds(10))) {
            assertThat(lease.fencingToken())
                    .as("the token after a crash right after a grant whose token was ahead of the clock")
                    .isGreaterThan(ahead + 1);
        }
    }

    /** The server process of the session waiting for the key's advisory lock (waits up to 5 s for it to wait). */
    private static long waitingSession(String key) {
        String sql = "SELECT coalesce(max(l.pid), 0) FROM pg_locks l JOIN " + TABLE + " t ON "
                + ServerSql.holds("l", "t") + " WHERE t.key_hash = ? AND NOT l.granted";
        return await("a session waiting for key '" + key + "'")
                .atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(10))
                .until(() -> ServerSql.count(SERVER, sql, ServerSql.sha256(key)), pid -> pid != 0);
    }

    /** A server crashed by the other test grants nothing for the restart hold-off. */
    @BeforeEach
    void serverUpForTheRestartHoldOff() {
        SERVER.awaitUptime(SESSION_SECONDS);
    }

    @AfterEach
    void forgetClients() {
        backends.clear();
    }

    @AfterAll
    static void stopServer() {
        SERVER.close();
    }
}
