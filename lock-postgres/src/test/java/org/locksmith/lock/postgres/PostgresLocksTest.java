package org.locksmith.lock.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.PrintWriter;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.testservers.TestPostgres;

/** The PostgreSQL backend through its public entry points, against the test server ({@link TestPostgres}). */
class PostgresLocksTest {
    private static final String TABLE =
            "api_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private static HikariDataSource pool;

    @BeforeAll
    static void openPool() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(TestPostgres.jdbcUrl());
        config.setUsername(TestPostgres.user());
        config.setPassword(TestPostgres.password());
        config.setMaximumPoolSize(8);
        config.setAutoCommit(false); // as many applications run: the lock must not change it for them
        pool = new HikariDataSource(config);
    }

    @AfterAll
    static void dropTable() throws SQLException {
        try (Connection c = connect();
                Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + TABLE);
            s.execute("DROP FUNCTION IF EXISTS " + TABLE + "_acquire");
        }
        pool.close();
    }

    private static LockClient client() {
        return PostgresLocks.builder().dataSource(pool).table(TABLE).build();
    }

    @Test
    void applicationPoolConnectionsComeBackAsTheyWere() throws Exception {
        try (LockClient locks = client()) {
            LockLease lease = locks.lock("settings").acquire(Duration.ofSeconds(5));
            assertThat(lease.fencingToken()).isPositive();
            lease.release();
        }
        // every connection of the pool: none may keep the lock's session settings or autocommit
        Connection[] all = new Connection[8];
        try {
            for (int i = 0; i < all.length; i++) {
                all[i] = pool.getConnection();
                assertThat(all[i].getAutoCommit()).isFalse();
                try (Statement s = all[i].createStatement();
                        ResultSet rs = s.executeQuery("SELECT current_setting('idle_session_timeout'),"
                                + " coalesce(current_setting('locksmith.lease', true), ''),"
                                + " (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
                                + " AND pid = pg_backend_pid())")) {
                    rs.next();
                    assertThat(rs.getString(1)).as("idle_session_timeout").isEqualTo("0");
                    assertThat(rs.getString(2)).as("locksmith.lease").isEmpty();
                    assertThat(rs.getInt(3)).as("advisory locks left").isZero();
                }
                all[i].rollback();
            }
        } finally {
            for (Connection c : all) {
                if (c != null) {
                    c.close();
                }
            }
        }
    }

    /**
     * Two keys whose first candidate lock id is the same: the second key to come finds the id taken in the key table
     * and takes its next candidate, so both are held at once, by different clients.
     */
    @Test
    void keysWhoseIdsCollideAreStillDistinctLocks() throws Exception {
        String key = "collides-" + UUID.randomUUID();
        long firstCandidate = candidateId(TABLE, ServerSql.sha256(key), 0);
        try (LockClient locks = client();
                Connection squatter = connect()) {
            // another key already owns the first candidate, and a session holds its advisory lock
            try (PreparedStatement ps = squatter.prepareStatement(
                    "INSERT INTO " + TABLE + " (key_hash, id) VALUES (?, ?); SELECT pg_advisory_lock(?)")) {
                ps.setBytes(1, ServerSql.sha256("some other key"));
                ps.setLong(2, firstCandidate);
                ps.setLong(3, firstCandidate);
                ps.execute();
            }
            Optional<LockLease> lease = locks.lock(key).tryAcquire();
            assertThat(lease)
                    .as("tryAcquire of a key whose first candidate id is held by another key")
                    .isPresent();
            try (PreparedStatement ps = squatter.prepareStatement("SELECT id FROM " + TABLE + " WHERE key_hash = ?")) {
                ps.setBytes(1, ServerSql.sha256(key));
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    assertThat(rs.getLong(1)).isEqualTo(candidateId(TABLE, ServerSql.sha256(key), 1));
                }
            }
            lease.get().release();
        }
    }

    /**
     * A data source that hands every borrower the same server session (what PgBouncer in transaction mode may do):
     * session advisory locks are re-entrant per session, so a second lock on it would be granted to a second owner.
     * The acquire function finds the session marked with the first lease and refuses.
     */
    @Test
    void aSharedServerSessionIsRefused() throws Exception {
        try (Connection shared = connect()) {
            DataSource sameSession = sharing(shared);
            try (LockClient locks =
                    PostgresLocks.builder().dataSource(sameSession).table(TABLE).build()) {
                LockLease first = locks.lock("shared-a").acquire(Duration.ofSeconds(5));
                CompletableFuture<Optional<LockLease>> second = CompletableFuture.supplyAsync(
                        () -> locks.lock("shared-a").tryAcquire());
                assertThatThrownBy(() -> second.get(10, TimeUnit.SECONDS))
                        .hasCauseInstanceOf(LockBackendException.class)
                        .hasMessageContaining("transaction mode");
                first.release();
            }
        }
    }

    /**
     * A pooler in transaction mode may run a client's next statement on another client's server session. The
     * clean-up after a failed wait (which frees whatever the wait may have taken) must then leave that session's
     * lock and mark alone: here the waiter's clean-up is routed to the holder's session, as such a pooler may do.
     */
    @Test
    void aCleanUpThatLandsOnAnotherOwnersSessionLeavesItsLockAlone() throws Exception {
        String key = "cleanup-elsewhere-" + UUID.randomUUID();
        try (Connection holderSession = connect();
                Connection waiterSession = connect();
                LockClient holder = PostgresLocks.builder()
                        .dataSource(lending(unclosable(holderSession)))
                        .table(TABLE)
                        .build();
                LockClient waiter = PostgresLocks.builder()
                        .dataSource(lending(cleanUpsTo(waiterSession, holderSession)))
                        .table(TABLE)
                        .build();
                LockClient third = client()) {
            LockLease held = holder.lock(key).acquire(Duration.ofSeconds(5));
            // the wait ends with its lock_timeout, and its clean-up runs on the holder's session
            assertThat(waiter.lock(key).tryAcquire(Duration.ofMillis(300))).isEmpty();
            Optional<LockLease> stolen = third.lock(key).tryAcquire();
            stolen.ifPresent(LockLease::release);
            assertThat(stolen)
                    .as("a grant to a third client while the holder holds, after another client's clean-up ran on"
                            + " the holder's session")
                    .isEmpty();
            assertThat(held.isValid()).isTrue();
            held.release();
        }
    }

    @Test
    void invalidSettingsFailBeforeAnyIo() {
        // port 9 answers nothing: an attempt to connect would fail differently
        assertThatThrownBy(() -> Locks.open("postgresql://u@127.0.0.1:9/db?sslmode=maybe"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("sslmode");
        assertThatThrownBy(() -> Locks.open("postgresql://u@127.0.0.1:9/db?table=Bad-Name"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("table");
        assertThatThrownBy(() -> Locks.open("postgresql://u@127.0.0.1:9/db?checkIntervalMs=1000&sessionTimeoutMs=1500"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("twice checkInterval");
        assertThatThrownBy(() -> Locks.open("postgresql://u@127.0.0.1:9/"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("names no database");
        assertThatThrownBy(() -> PostgresLocks.builder().build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("data source");
    }

    @Test
    void anUnreachableServerFailsWithinTheTimeout() {
        long start = System.nanoTime();
        assertThatThrownBy(() -> Locks.open("postgresql://u@127.0.0.1:9/db?timeoutMs=1000"))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("127.0.0.1:9");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    }

    static Connection connect() throws SQLException {
        return DriverManager.getConnection(TestPostgres.jdbcUrl(), TestPostgres.user(), TestPostgres.password());
    }

    /** The documented candidate ids: 64 bits of SHA-256 over the table name, a zero byte, the attempt, the key hash. */
    static long candidateId(String table, byte[] keyHash, int attempt) throws Exception {
        MessageDigest d = MessageDigest.getInstance("SHA-256");
        d.update(table.getBytes(StandardCharsets.UTF_8));
        d.update((byte) 0);
        d.update((byte) attempt);
        d.update(keyHash);
        return ByteBuffer.wrap(d.digest()).getLong();
    }

    /** A data source lending {@code shared} to everyone; closing what it lends does nothing. */
    private static DataSource sharing(Connection shared) {
        return lending(unclosable(shared));
    }

    /** {@code c}, except that closing it does nothing. */
    private static Connection unclosable(Connection c) {
        return (Connection) Proxy.newProxyInstance(
                PostgresLocksTest.class.getClassLoader(), new Class<?>[] {Connection.class}, (p, m, args) -> {
                    if (m.getName().equals("close") || m.getName().equals("abort")) {
                        return null;
                    }
                    return invoke(m, c, args);
                });
    }

    /**
     * {@code main} (unclosable), except that the statements that free a session's locks run on {@code elsewhere}:
     * what a pooler in transaction mode may do to a client's clean-up.
     */
    private static Connection cleanUpsTo(Connection main, Connection elsewhere) {
        return (Connection) Proxy.newProxyInstance(
                PostgresLocksTest.class.getClassLoader(), new Class<?>[] {Connection.class}, (p, m, args) -> {
                    switch (m.getName()) {
                        case "close", "abort" -> {
                            return null;
                        }
                        case "prepareStatement" -> {
                            boolean freesAll = ((String) args[0]).contains("pg_advisory_unlock_all");
                            return invoke(m, freesAll ? elsewhere : main, args);
                        }
                        case "createStatement" -> {
                            Statement here = (Statement) invoke(m, main, args);
                            Statement there = elsewhere.createStatement();
                            return Proxy.newProxyInstance(
                                    PostgresLocksTest.class.getClassLoader(),
                                    new Class<?>[] {Statement.class},
                                    (sp, sm, sargs) -> {
                                        if (sm.getName().equals("close")) {
                                            there.close();
                                            return invoke(sm, here, sargs);
                                        }
                                        boolean freesAll = sargs != null
                                                && sargs.length > 0
                                                && sargs[0] instanceof String sql
                                                && sql.contains("pg_advisory_unlock_all");
                                        return invoke(sm, freesAll ? there : here, sargs);
                                    });
                        }
                        default -> {
                            return invoke(m, main, args);
                        }
                    }
                });
    }

    private static Object invoke(java.lang.reflect.Method m, Object target, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** A data source lending {@code c} to everyone. */
    private static DataSource lending(Connection c) {
        return new DataSource() {
            @Override
            public Connection getConnection() {
                return c;
            }

            @Override
            public Connection getConnection(String user, String password) {
                return c;
            }

            @Override
            public PrintWriter getLogWriter() {
                return null;
            }

            @Override
            public void setLogWriter(PrintWriter out) {}

            @Override
            public void setLoginTimeout(int seconds) {}

            @Override
            public int getLoginTimeout() {
                return 0;
            }

            @Override
            public Logger getParentLogger() throws SQLFeatureNotSupportedException {
                throw new SQLFeatureNotSupportedException();
            }

            @Override
            public <T> T unwrap(Class<T> iface) throws SQLException {
                throw new SQLException("not a wrapper");
            }

            @Override
            public boolean isWrapperFor(Class<?> iface) {
                return false;
            }
        };
    }
}
