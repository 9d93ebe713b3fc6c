package org.locksmith.lock.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.LockTimeoutException;
import org.locksmith.lock.mysql.internal.KeyCodec;

/**
 * Sessions that die at the worst moments, and lock state that is missing: never a silent success. A grant whose
 * session dies before its fencing token is issued must not be returned (else two holders, the dead one with the
 * higher token); a renewal must ask the server, not a pool's local idea of validity; a lock row that is missing
 * when it must exist is a {@link LockBackendException}.
 */
class MySqlSessionLossTest {
    private static final String BASE_URL = MySqlTestServer.baseUrl();
    private static final String TABLE = MySqlTestServer.uniqueTable("loss");

    @AfterAll
    static void dropTables() throws SQLException {
        for (MySqlStrategy s : MySqlStrategy.values()) {
            MySqlTestServer.dropTables(BASE_URL, table(s));
        }
        MySqlTestServer.execute(BASE_URL, "DROP VIEW IF EXISTS " + TABLE + "_view");
        MySqlTestServer.dropTables(BASE_URL, TABLE + "_view");
        MySqlTestServer.dropTables(BASE_URL, TABLE + "_base");
    }

    static String table(MySqlStrategy strategy) {
        return TABLE + "_" + strategy.urlValue();
    }

    static String url(MySqlStrategy strategy) {
        // Session checks far apart: the grant itself must not be fooled, whatever a later check would find.
        return BASE_URL + "?strategy=" + strategy.urlValue() + "&table=" + table(strategy)
                + "&checkIntervalMs=600000&timeoutMs=5000&restartHoldOffMs=0";
    }

    @ParameterizedTest
    @EnumSource(
            value = MySqlStrategy.class,
            names = {"ROW", "NAMED"})
    void aGrantWhoseSessionDiesBeforeItsTokenIsIssuedIsNotReturned(MySqlStrategy strategy) throws Exception {
        String key = "loss:token:" + System.nanoTime();
        byte[] hash = KeyCodec.sha256(key);
        try (LockClient a = MySqlTckSupport.open(url(strategy));
                LockClient b = MySqlTckSupport.open(url(strategy));
                Connection blocker = MySqlTestServer.connect(BASE_URL);
                Connection admin = MySqlTestServer.connect(BASE_URL)) {
            a.lock(key).acquire(Duration.ofSeconds(5)).release(); // the lock and fence rows exist
            // Hold the fence row: a's token issue waits after a has been granted the lock.
            blocker.setAutoCommit(false);
            try (PreparedStatement ps = blocker.prepareStatement(
                    "SELECT token FROM " + table(strategy) + "_fence WHERE key_hash = ? FOR UPDATE")) {
                ps.setBytes(1, hash);
                ps.executeQuery().close();
            }
            CompletableFuture<Object> first = outcome(a, key, Duration.ofSeconds(4));
            long holder = strategy == MySqlStrategy.NAMED
                    ? await().atMost(Duration.ofSeconds(5))
                            .until(
                                    () -> namedHolder(
                                            admin, MySqlTckSupport.backendOf(a).lockName(key)),
                                    id -> id > 0)
                    : rowHolder(admin, table(strategy), hash);
            kill(admin, holder);
            CompletableFuture<Object> second = outcome(b, key, Duration.ofSeconds(5));
            if (strategy == MySqlStrategy.NAMED) {
                // b is granted the name and waits for its token behind the blocker, like a did
                await().atMost(Duration.ofSeconds(5))
                        .until(
                                () -> namedHolder(
                                        admin, MySqlTckSupport.backendOf(b).lockName(key)),
                                id -> id > 0);
            }
            blocker.commit();
            Object firstOutcome = first.get(10, TimeUnit.SECONDS);
            Object secondOutcome = second.get(10, TimeUnit.SECONDS);
            // The killed grant must not be returned: either a tried again on a fresh session and won it (then b
            // timed out), or b holds it and a timed out. Two leases at once means the dead grant was returned.
            long leases = Stream.of(firstOutcome, secondOutcome)
                    .filter(LockLease.class::isInstance)
                    .count();
            assertThat(leases)
                    .as(
                            "leases granted (a: %s, b: %s) after a's session was killed before its token was issued",
                            firstOutcome, secondOutcome)
                    .isEqualTo(1);
            Object other = firstOutcome instanceof LockLease ? secondOutcome : firstOutcome;
            assertThat(other).isInstanceOf(LockTimeoutException.class);
            LockLease granted = (LockLease) (firstOutcome instanceof LockLease ? firstOutcome : secondOutcome);
            assertThat(granted.isValid()).isTrue();
        } // closing the clients releases the lease, held by a pool thread
    }

    /**
     * A pool that answers {@code isValid} from local state (as some do): a killed session must still be noticed,
     * because the check asks the server on the held connection.
     */
    @ParameterizedTest
    @EnumSource(
            value = MySqlStrategy.class,
            names = {"ROW", "NAMED"})
    void aKilledSessionIsNoticedEvenWhenThePoolAnswersIsValidLocally(MySqlStrategy strategy) throws Exception {
        String key = "loss:check:" + System.nanoTime();
        try (PlainTestPool pool = new PlainTestPool(BASE_URL, 3);
                LockClient client = MySqlTckSupport.client(MySqlLocks.builder()
                        .dataSource(pool)
                        .strategy(strategy)
                        .table(table(strategy))
                        .checkInterval(Duration.ofMillis(100))
                        .poolSize(2)
                        .buildBackend())) {
            LockLease lease = client.lock(key).acquire(Duration.ofSeconds(5));
            CompletableFuture<LockLostException> lost = new CompletableFuture<>();
            lease.onLost(lost::complete);
            MySqlTckSupport.killHeldSessions(client, BASE_URL);
            assertThat(lost.get(3, TimeUnit.SECONDS)).isNotNull();
            assertThat(lease.isValid()).isFalse();
            assertThatThrownBy(lease::release).isInstanceOf(LockLostException.class);
        }
    }

    /**
     * A lease found lost gives its connection back at once: with one lock connection, another key can be taken
     * while the owner of the lost lease has not called {@code release()} yet.
     */
    @ParameterizedTest
    @EnumSource(
            value = MySqlStrategy.class,
            names = {"ROW", "NAMED"})
    void aLostLeaseGivesItsConnectionBackBeforeItsOwnerReleasesIt(MySqlStrategy strategy) throws Exception {
        String key = "loss:giveback:" + System.nanoTime();
        try (LockClient client = MySqlTckSupport.open(BASE_URL + "?strategy=" + strategy.urlValue() + "&table="
                + table(strategy) + "&checkIntervalMs=100&poolSize=1")) {
            LockLease lease = client.lock(key).acquire(Duration.ofSeconds(5));
            CompletableFuture<LockLostException> lost = new CompletableFuture<>();
            lease.onLost(lost::complete);
            MySqlTckSupport.killHeldSessions(client, BASE_URL);
            assertThat(lost.get(3, TimeUnit.SECONDS)).isNotNull();
            try (LockLease other = client.lock(key + ":other").acquire(Duration.ofSeconds(2))) {
                assertThat(other.isValid()).isTrue();
            }
            assertThatThrownBy(lease::release).isInstanceOf(LockLostException.class);
            client.lock(key).acquire(Duration.ofSeconds(2)).release();
        }
    }

    /**
     * A lease take that committed on the server but whose reply was lost: the acquire fails, and the row it took is
     * released at once (owner-checked) instead of staying taken by nobody for the lease time.
     */
    @Test
    void aLeaseTakeWhoseReplyWasLostLeavesNoGhostHolder() throws Exception {
        String key = "loss:ambiguous:" + System.nanoTime();
        try (com.zaxxer.hikari.HikariDataSource pool = MySqlTestServer.applicationPool(3)) {
            ScriptedDataSource network = new ScriptedDataSource(pool);
            try (LockClient client = MySqlLocks.builder()
                            .dataSource(network.dataSource())
                            .strategy(MySqlStrategy.LEASE)
                            .leaseTime(Duration.ofSeconds(30))
                            .table(table(MySqlStrategy.LEASE))
                            .build();
                    LockClient other = MySqlTckSupport.open(url(MySqlStrategy.LEASE))) {
                client.lock(key).acquire(Duration.ofSeconds(5)).release(); // the row exists
                network.loseReplyTo("SET owner = ?,");
                assertThatThrownBy(() -> client.lock(key).acquire(Duration.ofSeconds(5)))
                        .isInstanceOf(LockBackendException.class);
                assertThat(network.lostReplies()).isEqualTo(1);
                assertThat(network.lostUpdateCount())
                        .as("the take committed on the server")
                        .isEqualTo(1);
                LockLease after = other.lock(key).tryAcquire().orElse(null);
                assertThat(after)
                        .as("the key is free right after the failed acquire")
                        .isNotNull();
                after.release();
            }
        }
    }

    /** A fencing-token statement chosen as a deadlock victim is sent again: the grant goes through. */
    @ParameterizedTest
    @EnumSource(
            value = MySqlStrategy.class,
            names = {"ROW", "NAMED"})
    void aDeadlockOnTheTokenStatementIsRetried(MySqlStrategy strategy) throws Exception {
        String key = "loss:fence-deadlock:" + System.nanoTime();
        try (com.zaxxer.hikari.HikariDataSource pool = MySqlTestServer.applicationPool(4)) {
            ScriptedDataSource network = new ScriptedDataSource(pool);
            try (LockClient client = MySqlLocks.builder()
                    .dataSource(network.dataSource())
                    .strategy(strategy)
                    .table(table(strategy))
                    .build()) {
                long first;
                try (LockLease lease = client.lock(key).acquire(Duration.ofSeconds(5))) {
                    first = lease.fencingToken();
                }
                network.deadlockOn("_fence");
                try (LockLease lease = client.lock(key).acquire(Duration.ofSeconds(5))) {
                    assertThat(lease.fencingToken()).isGreaterThan(first);
                }
            }
        }
    }

    /** A lock "table" whose rows never become visible: the row strategy must fail, not loop or grant. */
    @Test
    void aLockRowMissingRightAfterItsCreationIsABackendFailure() throws Exception {
        String view = TABLE + "_view";
        String base = TABLE + "_base";
        try (LockClient setup = MySqlTckSupport.open(BASE_URL + "?table=" + base)) {
            setup.lock("loss:setup").tryAcquire().orElseThrow().release(); // creates base, base_fence and base_shard
        }
        MySqlTestServer.execute(BASE_URL, "CREATE TABLE IF NOT EXISTS " + view + "_fence LIKE " + base + "_fence");
        MySqlTestServer.execute(BASE_URL, "CREATE TABLE IF NOT EXISTS " + view + "_shard LIKE " + base + "_shard");
        // Inserts reach the base table, reads through the view never see them: rows "vanish" at once.
        MySqlTestServer.execute(
                BASE_URL, "CREATE OR REPLACE VIEW " + view + " AS SELECT * FROM " + base + " WHERE 1 = 0");
        try (LockClient client = MySqlTckSupport.open(BASE_URL + "?createSchema=false&table=" + view)) {
            assertThatThrownBy(() -> client.lock("loss:missing").acquire(Duration.ofSeconds(2)))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("missing");
        }
    }

    private static CompletableFuture<Object> outcome(LockClient client, String key, Duration wait) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return client.lock(key).acquire(wait);
            } catch (Exception e) {
                return e;
            }
        });
    }

    private static long namedHolder(Connection admin, String name) throws SQLException {
        try (PreparedStatement ps = admin.prepareStatement("SELECT IS_USED_LOCK(?)")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** The session holding a row lock, found by queueing a probe behind it and asking InnoDB who blocks it. */
    private static long rowHolder(Connection admin, String table, byte[] hash) throws Exception {
        try (Connection probe = MySqlTestServer.connect(BASE_URL)) {
            long probeId;
            try (Statement s = probe.createStatement();
                    ResultSet rs = s.executeQuery("SELECT CONNECTION_ID()")) {
                rs.next();
                probeId = rs.getLong(1);
            }
            probe.setAutoCommit(false);
            CompletableFuture<Void> queued = CompletableFuture.runAsync(() -> {
                try (PreparedStatement ps =
                        probe.prepareStatement("SELECT 1 FROM " + table + " WHERE key_hash = ? FOR UPDATE WAIT 10")) {
                    ps.setBytes(1, hash);
                    ps.executeQuery().close();
                    probe.rollback();
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            long holder = await().atMost(Duration.ofSeconds(5)).until(() -> blockerOf(admin, probeId), id -> id > 0);
            kill(admin, holder);
            queued.get(10, TimeUnit.SECONDS); // the probe got the row, and let it go
            return holder;
        }
    }

    private static long blockerOf(Connection admin, long requester) throws SQLException {
        try (PreparedStatement ps = admin.prepareStatement("SELECT b.trx_mysql_thread_id"
                + " FROM information_schema.INNODB_LOCK_WAITS w"
                + " JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id"
                + " JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id"
                + " WHERE r.trx_mysql_thread_id = ?")) {
            ps.setLong(1, requester);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : 0;
            }
        }
    }

    private static void kill(Connection admin, long id) throws SQLException {
        try (Statement s = admin.createStatement()) {
            s.execute("KILL CONNECTION " + id);
        } catch (SQLException e) {
            if (e.getErrorCode() != 1094) { // already gone
                throw e;
            }
        }
    }
}
