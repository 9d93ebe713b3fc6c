package org.locksmith.lock.postgres;

import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
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
 * holding its lock terminated, as an operator would), a crash restart, a restart with an empty data directory, an
 * outage (every server process stopped with SIGSTOP, then continued), and one lease's session stalled (its server
 * process stopped with SIGSTOP).
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
                    ServerSql.admin(SERVER, "SELECT pg_terminate_backend(" + pid + ")");
                }
            }

            @Override
            public void deleteLockState(String key) {
                ServerSql.admin(
                        SERVER,
                        "SELECT pg_terminate_backend(l.pid) FROM pg_locks l JOIN " + TABLE + " t ON "
                                + ServerSql.holds("l", "t") + " WHERE t.key_hash = ?",
                        ServerSql.sha256(key));
                ServerSql.admin(SERVER, "DELETE FROM " + TABLE + " WHERE key_hash = ?", ServerSql.sha256(key));
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

            /** The server process of the session holding the key's advisory lock, stopped with SIGSTOP. */
            @Override
            public Outage stallLease(LockClient client, String key) {
                long pid = ServerSql.look(
                        SERVER,
                        "SELECT coalesce(max(l.pid), 0) FROM pg_locks l JOIN " + TABLE + " t ON "
                                + ServerSql.holds("l", "t") + " WHERE t.key_hash = ? AND l.granted",
                        ServerSql.sha256(key));
                if (!BACKENDS.get(client).heldSessionPids().contains((int) pid)) {
                    throw new IllegalStateException("no session of " + client + " holds key '" + key + "'");
                }
                SERVER.pauseProcess(pid);
                return () -> SERVER.resumeProcess(pid);
            }
        };
    }

    /** Advisory locks held or waited for on the key, and its row in the key table. */
    @Override
    protected OptionalInt storeEntries(String key) {
        return OptionalInt.of((int) ServerSql.look(
                SERVER,
                "SELECT (SELECT count(*) FROM pg_locks l JOIN " + TABLE + " t ON " + ServerSql.holds("l", "t")
                        + " WHERE t.key_hash = ?)"
                        + " + (SELECT count(*) FROM " + TABLE + " WHERE key_hash = ?)",
                ServerSql.sha256(key),
                ServerSql.sha256(key)));
    }

    /** The sessions of this class's clients, as the server sees them. */
    @Override
    protected OptionalInt openConnections() {
        return OptionalInt.of((int) ServerSql.look(
                SERVER, "SELECT count(*) FROM pg_stat_activity WHERE application_name = ?", APPLICATION));
    }

    /**
     * The transactions the server has counted in the test database (every statement of an autocommit session is
     * one). The server publishes a session's counts at most once a second while it is busy, so a count lags by up to
     * a second: a poller still shows, an idle waiter counts nothing.
     */
    @Override
    protected OptionalLong storeOperations() {
        return OptionalLong.of(ServerSql.count(
                SERVER, "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"));
    }

    /** A server restarted by an earlier test grants nothing for the restart hold-off (the TCK's session timeout). */
    @BeforeEach
    void serverUpForTheRestartHoldOff() {
        SERVER.awaitUptime(timings().sessionTimeout().toSeconds());
    }

    @AfterAll
    static void stopServer() {
        ServerSql.forget(SERVER);
        SERVER.close();
    }
}
