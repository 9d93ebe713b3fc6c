package org.locksmith.lock.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockTimeoutException;

/** Lock clients on a pool the application owns ({@link MySqlLocks#using}): its settings are not ours. */
class MySqlApplicationPoolTest {
    private static final String BASE_URL = MySqlTestServer.baseUrl();
    private static final String TABLE = MySqlTestServer.uniqueTable("apppool");

    @AfterAll
    static void dropTable() {
        MySqlTestServer.dropTables(BASE_URL, TABLE);
    }

    /** A pool as an application configures it: the server's default isolation (REPEATABLE READ). */
    static HikariDataSource hikari(int size) {
        HikariDataSource pool = MySqlTestServer.applicationPool(size);
        pool.setConnectionTimeout(5000);
        return pool;
    }

    /**
     * Concurrent first acquires of distinct new keys: under REPEATABLE READ the locking read of a missing row takes
     * a gap lock, and two such transactions inserting into the same gap deadlock (error 1213). Lock transactions
     * must run at READ COMMITTED, and a deadlock in the insert-then-lock step must be retried, not surfaced.
     */
    @Test
    void concurrentFirstAcquiresOfNewKeysOnARepeatableReadPoolNeverFail() throws Exception {
        int threads = 8;
        int rounds = 25;
        try (HikariDataSource ds = hikari(threads + 2);
                LockClient client = MySqlLocks.builder()
                        .dataSource(ds)
                        .table(TABLE)
                        .poolSize(threads)
                        .build()) {
            String prefix = "apppool:" + System.nanoTime() + ":";
            Queue<String> failures = new ConcurrentLinkedQueue<>();
            CyclicBarrier barrier = new CyclicBarrier(threads);
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<Integer>> results = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int thread = t;
                    results.add(pool.submit(() -> {
                        int granted = 0;
                        for (int r = 0; r < rounds; r++) {
                            barrier.await(30, TimeUnit.SECONDS);
                            try (LockLease lease =
                                    client.lock(prefix + r + ":" + thread).acquire(Duration.ofSeconds(20))) {
                                granted++;
                            }
                        }
                        return granted;
                    }));
                }
                int granted = 0;
                for (Future<Integer> f : results) {
                    granted += f.get(120, TimeUnit.SECONDS);
                }
                assertThat(failures).as("failed first acquires of new keys").isEmpty();
                assertThat(granted).isEqualTo(threads * rounds);
            } finally {
                pool.shutdownNow();
            }
        }
    }

    /**
     * The retry above would hide gap-lock deadlocks; the lock transaction itself must run at READ COMMITTED on a pool
     * whose default is REPEATABLE READ (asked of InnoDB, for the session that holds the row).
     */
    @Test
    void aRowLockTransactionOnARepeatableReadPoolRunsAtReadCommitted() throws Exception {
        try (HikariDataSource ds = hikari(3);
                LockClient client = MySqlTckSupport.client(
                        MySqlLocks.builder().dataSource(ds).table(TABLE).buildBackend());
                Connection admin = MySqlTestServer.connect(BASE_URL)) {
            try (LockLease lease =
                    client.lock("apppool:isolation:" + System.nanoTime()).acquire(Duration.ofSeconds(5))) {
                List<Connection> held = MySqlTckSupport.backendOf(client).heldConnections();
                assertThat(held).hasSize(1);
                long id = MySqlTestServer.sessionId(held.get(0));
                try (PreparedStatement ps = admin.prepareStatement(
                        "SELECT trx_isolation_level FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = ?")) {
                    ps.setLong(1, id);
                    try (ResultSet rs = ps.executeQuery()) {
                        assertThat(rs.next())
                                .as("an open transaction holds the row")
                                .isTrue();
                        assertThat(rs.getString(1)).isEqualTo("READ COMMITTED");
                    }
                }
            }
        }
    }

    /**
     * The application itself uses every connection of its pool: a lock's borrow must end at the caller's deadline
     * (a timeout), not at the pool's own connectionTimeout (10 s here, HikariCP's default is 30 s).
     */
    @ParameterizedTest
    @EnumSource(
            value = MySqlStrategy.class,
            names = {"ROW", "NAMED"})
    void aBorrowFromABusyApplicationPoolEndsAtTheCallersDeadline(MySqlStrategy strategy) throws Exception {
        try (HikariDataSource ds = hikari(3);
                LockClient client = MySqlLocks.builder()
                        .dataSource(ds)
                        .strategy(strategy)
                        .table(TABLE + "_" + strategy.urlValue())
                        .poolSize(1)
                        .build()) {
            ds.setConnectionTimeout(10_000);
            String key = "apppool:busy:" + System.nanoTime();
            client.lock(key).acquire(Duration.ofSeconds(5)).release();
            List<Connection> taken = new ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    taken.add(ds.getConnection());
                }
                long t0 = System.nanoTime();
                assertThatThrownBy(() -> client.lock(key).acquire(Duration.ofMillis(300)))
                        .isInstanceOf(LockTimeoutException.class);
                assertThat(Duration.ofNanos(System.nanoTime() - t0))
                        .isBetween(Duration.ofMillis(290), Duration.ofMillis(1500));
            } finally {
                taken.forEach(c -> {
                    try {
                        c.close();
                    } catch (SQLException e) {
                        throw new IllegalStateException(e);
                    }
                });
            }
            client.lock(key).acquire(Duration.ofSeconds(5)).release();
        } finally {
            MySqlTestServer.dropTables(BASE_URL, TABLE + "_" + strategy.urlValue());
        }
    }

    /**
     * The short borrows (the row strategy's fencing token, every lease statement) from an application's pool whose
     * connections the application holds: they end after {@code timeoutMs} with {@link LockBackendException}, not
     * after the pool's own connectionTimeout (10 s here, HikariCP's default is 30 s), and not as "not granted".
     */
    @ParameterizedTest
    @EnumSource(
            value = MySqlStrategy.class,
            names = {"ROW", "LEASE"})
    void aShortBorrowFromAnExhaustedApplicationPoolFailsWithinTimeoutMs(MySqlStrategy strategy) throws Exception {
        String table = TABLE + "_short_" + strategy.urlValue();
        // row: one lock connection plus one for tokens; the application takes all but the lock connection
        int size = strategy == MySqlStrategy.ROW ? 3 : 2;
        try (HikariDataSource ds = hikari(size);
                LockClient client = MySqlLocks.builder()
                        .dataSource(ds)
                        .strategy(strategy)
                        .table(table)
                        .poolSize(1)
                        .timeout(Duration.ofSeconds(1))
                        .build()) {
            ds.setConnectionTimeout(10_000);
            String key = "apppool:short:" + System.nanoTime();
            client.lock(key).acquire(Duration.ofSeconds(5)).release();
            List<Connection> taken = new ArrayList<>();
            try {
                for (int i = 0; i < 2; i++) {
                    taken.add(ds.getConnection());
                }
                for (boolean tryOnly : new boolean[] {true, false}) {
                    long t0 = System.nanoTime();
                    assertThatThrownBy(() -> {
                                if (tryOnly) {
                                    client.lock(key).tryAcquire();
                                } else {
                                    client.lock(key).acquire(Duration.ofSeconds(30));
                                }
                            })
                            .as("%s, exhausted application pool", tryOnly ? "tryAcquire()" : "acquire(30 s)")
                            .isInstanceOf(LockBackendException.class)
                            .hasMessageContaining("timeoutMs");
                    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofMillis(3000));
                }
            } finally {
                taken.forEach(c -> {
                    try {
                        c.close();
                    } catch (SQLException e) {
                        throw new IllegalStateException(e);
                    }
                });
            }
            // nothing was left held: the key is free at once
            client.lock(key).tryAcquire().orElseThrow().release();
        } finally {
            MySqlTestServer.dropTables(BASE_URL, table);
        }
    }

    @Test
    void aShareThatLeavesTheApplicationNoConnectionIsRejectedAtBuild() throws Exception {
        try (HikariDataSource two = hikari(2);
                HikariDataSource four = hikari(4)) {
            assertThatThrownBy(() ->
                            MySqlLocks.builder().dataSource(two).table(TABLE).build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("maximumPoolSize=2")
                    .hasMessageContaining(">= 3");
            assertThatThrownBy(() -> MySqlLocks.builder()
                            .dataSource(four)
                            .table(TABLE)
                            .poolSize(3)
                            .build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("poolSize(3)")
                    .hasMessageContaining("no connection");
            // named issues its tokens on the holding session: one lock connection and one for the application
            try (LockClient named = MySqlLocks.builder()
                    .dataSource(two)
                    .strategy(MySqlStrategy.NAMED)
                    .table(TABLE)
                    .build()) {
                named.lock("apppool:two").acquire(Duration.ofSeconds(5)).release();
            }
        }
    }

    /**
     * By default a client lends itself a quarter of an application's HikariCP pool: with 8 connections, 2 locks
     * held at once; a third waits for its deadline (a timeout naming poolSize) while the application still has its
     * connections.
     */
    @Test
    void byDefaultAClientLendsItselfAQuarterOfTheApplicationsPool() throws Exception {
        try (HikariDataSource eight = hikari(8);
                LockClient client = MySqlLocks.builder()
                        .dataSource(eight)
                        .strategy(MySqlStrategy.NAMED)
                        .table(TABLE)
                        .build()) {
            String key = "apppool:share:" + System.nanoTime();
            try (LockLease a = client.lock(key + ":a").acquire(Duration.ofSeconds(5));
                    LockLease b = client.lock(key + ":b").acquire(Duration.ofSeconds(5))) {
                assertThat(a.isValid() && b.isValid()).isTrue();
                assertThatThrownBy(() -> client.lock(key + ":c").acquire(Duration.ofMillis(300)))
                        .isInstanceOf(LockTimeoutException.class);
                List<Connection> application = new ArrayList<>();
                try {
                    for (int i = 0; i < 6; i++) {
                        application.add(eight.getConnection());
                    }
                } finally {
                    for (Connection c : application) {
                        c.close();
                    }
                }
            }
        }
    }

    /**
     * A pool that does not reset what a borrower changed (many do not): every connection must come back with the
     * autocommit mode, isolation level, network timeout and lock wait timeout the application gave it, after grants,
     * contended timeouts, tries and releases.
     */
    @ParameterizedTest
    @EnumSource(MySqlStrategy.class)
    void connectionsGoBackToTheApplicationWithTheirSessionSettings(MySqlStrategy strategy) throws Exception {
        String table = TABLE + "_settings_" + strategy.urlValue();
        try (PlainTestPool pool = new PlainTestPool(BASE_URL, 4)) {
            for (Connection c : pool.physical()) {
                c.setAutoCommit(false);
                c.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
                c.setNetworkTimeout(Runnable::run, 12_345);
                try (Statement s = c.createStatement()) {
                    s.execute("SET SESSION innodb_lock_wait_timeout = 7");
                }
                c.commit();
            }
            List<String> before = settings(pool);
            try (LockClient a = MySqlTckSupport.client(MySqlLocks.builder()
                            .dataSource(pool)
                            .strategy(strategy)
                            .table(table)
                            .poolSize(2)
                            .buildBackend());
                    LockClient b =
                            MySqlTckSupport.open(BASE_URL + "?strategy=" + strategy.urlValue() + "&table=" + table)) {
                String key = "apppool:settings:" + System.nanoTime();
                a.lock(key).acquire(Duration.ofSeconds(5)).release();
                try (LockLease held = b.lock(key).acquire(Duration.ofSeconds(5))) {
                    assertThat(a.lock(key).tryAcquire()).isEmpty();
                    assertThat(a.lock(key).tryAcquire(Duration.ofMillis(200))).isEmpty();
                }
                a.lock(key).acquire(Duration.ofSeconds(5)).release();
                a.lock(key + ":new").tryAcquire().orElseThrow().release();
            } finally {
                MySqlTestServer.dropTables(BASE_URL, table);
            }
            assertThat(settings(pool))
                    .as("session settings of the application's connections")
                    .isEqualTo(before);
        }
    }

    private static List<String> settings(PlainTestPool pool) throws SQLException {
        List<String> result = new ArrayList<>();
        for (Connection c : pool.physical()) {
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT @@SESSION.innodb_lock_wait_timeout,"
                            + " @@SESSION.tx_isolation, @@SESSION.autocommit")) {
                rs.next();
                result.add("autoCommit=" + c.getAutoCommit() + " isolation=" + c.getTransactionIsolation()
                        + " networkTimeout=" + c.getNetworkTimeout() + " server: lock_wait=" + rs.getLong(1)
                        + " isolation=" + rs.getString(2) + " autocommit=" + rs.getLong(3));
            }
            if (!c.getAutoCommit()) {
                c.commit(); // end the read's transaction; a connection handed back in autocommit shows in the result
            }
        }
        return result;
    }
}
