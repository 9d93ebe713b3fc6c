package org.locksmith.lock.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;

/**
 * Statements per uncontended acquire and release, counted (not timed) from the server's global {@code Questions}
 * counter over many operations, so the average is exact unless other clients use the server at the same time (the
 * bound allows a little of that). Pings ({@code Com_admin_commands}) are reported beside it, not asserted: HikariCP
 * pings a pooled connection that sat idle for more than 500 ms before lending it, so a borrow may cost one more
 * round trip on an idle client. Server fsyncs ({@code Innodb_data_fsyncs}, and {@code Innodb_os_log_fsyncs} on MySQL) are reported too: they are what a
 * grant costs the server's disk (group commit may merge those of concurrent clients).
 */
class MySqlRoundTripTest {
    private static final String BASE_URL = MySqlTestServer.baseUrl();
    private static final String TABLE = MySqlTestServer.uniqueTable("trips");
    private static final int N = 50;

    @AfterAll
    static void dropTable() {
        MySqlTestServer.dropTables(BASE_URL, TABLE);
    }

    @ParameterizedTest(name = "{0}: acquire {1}, release {2}")
    @CsvSource({"ROW, 4, 2", "LEASE, 1, 1", "NAMED, 3, 2"})
    void roundTripsPerAcquireAndRelease(MySqlStrategy strategy, int acquireTrips, int releaseTrips) throws Exception {
        String url = BASE_URL + "?strategy=" + strategy.urlValue() + "&table=" + TABLE + "_" + strategy.urlValue()
                + "&poolSize=" + (N + 5) + "&checkIntervalMs=600000&leaseMs=600000&restartHoldOffMs=0";
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < N; i++) {
            keys.add("trips:" + strategy + ":" + i);
        }
        try (LockClient client = MySqlTckSupport.open(url);
                Connection admin = MySqlTestServer.connect(BASE_URL)) {
            // Warm up: create the rows and open every pooled connection once.
            List<LockLease> warm = new ArrayList<>();
            for (String k : keys) {
                warm.add(client.lock(k).acquire(Duration.ofSeconds(5)));
            }
            warm.forEach(LockLease::release);

            Map<String, Long> c0 = counters(admin);
            List<LockLease> leases = new ArrayList<>();
            for (String k : keys) {
                leases.add(client.lock(k).acquire(Duration.ofSeconds(5)));
            }
            Map<String, Long> c1 = counters(admin);
            leases.forEach(LockLease::release);
            Map<String, Long> c2 = counters(admin);

            // Each snapshot is one statement itself, counted in the next delta.
            double perAcquire = (delta(c0, c1, "Questions") - 1) / (double) N;
            double perRelease = (delta(c1, c2, "Questions") - 1) / (double) N;
            System.out.printf(
                    Locale.ROOT,
                    "ROUND TRIPS %s on %s: %.2f statements per acquire (+%.2f pings), %.2f per release (+%.2f"
                            + " pings); fsyncs %.2f per acquire, %.2f per release%n",
                    strategy,
                    BASE_URL,
                    perAcquire,
                    delta(c0, c1, "Com_admin_commands") / (double) N,
                    perRelease,
                    delta(c1, c2, "Com_admin_commands") / (double) N,
                    fsyncs(c0, c1) / (double) N,
                    fsyncs(c1, c2) / (double) N);
            assertThat(perAcquire)
                    .as("round trips per uncontended acquire")
                    .isBetween(acquireTrips - 0.01, acquireTrips + 0.2);
            assertThat(perRelease).as("round trips per release").isBetween(releaseTrips - 0.01, releaseTrips + 0.2);
        }
    }

    /** The server's statement, ping and redo-log fsync counters, read by one statement. */
    private static Map<String, Long> counters(Connection admin) throws SQLException {
        Map<String, Long> values = new HashMap<>();
        try (Statement s = admin.createStatement();
                ResultSet rs = s.executeQuery("SHOW GLOBAL STATUS WHERE Variable_name IN"
                        + " ('Questions', 'Com_admin_commands', 'Innodb_os_log_fsyncs', 'Innodb_data_fsyncs')")) {
            while (rs.next()) {
                values.put(rs.getString(1), rs.getLong(2));
            }
        }
        return values;
    }

    /** MySQL counts redo-log fsyncs apart; MariaDB 10.8+ counts every fsync in {@code Innodb_data_fsyncs}. */
    private static long fsyncs(Map<String, Long> before, Map<String, Long> after) {
        return delta(before, after, "Innodb_os_log_fsyncs") + delta(before, after, "Innodb_data_fsyncs");
    }

    private static long delta(Map<String, Long> before, Map<String, Long> after, String counter) {
        return after.getOrDefault(counter, 0L) - before.getOrDefault(counter, 0L);
    }
}
