package org.locksmith.lock.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
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
 * round trip on an idle client.
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
                + "&poolSize=" + (N + 5) + "&checkIntervalMs=600000&leaseMs=600000";
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

            long q0 = trips(admin, "Questions");
            long p0 = trips(admin, "Com_admin_commands");
            List<LockLease> leases = new ArrayList<>();
            for (String k : keys) {
                leases.add(client.lock(k).acquire(Duration.ofSeconds(5)));
            }
            long q1 = trips(admin, "Questions");
            long p1 = trips(admin, "Com_admin_commands");
            leases.forEach(LockLease::release);
            long q2 = trips(admin, "Questions");
            long p2 = trips(admin, "Com_admin_commands");

            // Each trips() call is one statement itself: two between q0 and q1.
            double perAcquire = (q1 - q0 - 2) / (double) N;
            double perRelease = (q2 - q1 - 2) / (double) N;
            System.out.printf(
                    Locale.ROOT,
                    "ROUND TRIPS %s on %s: %.2f statements per acquire (+%.2f pings), %.2f per release (+%.2f"
                            + " pings)%n",
                    strategy,
                    BASE_URL,
                    perAcquire,
                    (p1 - p0) / (double) N,
                    perRelease,
                    (p2 - p1) / (double) N);
            assertThat(perAcquire)
                    .as("round trips per uncontended acquire")
                    .isBetween(acquireTrips - 0.01, acquireTrips + 0.2);
            assertThat(perRelease).as("round trips per release").isBetween(releaseTrips - 0.01, releaseTrips + 0.2);
        }
    }

    private static long trips(Connection admin, String counter) throws SQLException {
        try (Statement s = admin.createStatement();
                ResultSet rs = s.executeQuery("SHOW GLOBAL STATUS LIKE '" + counter + "'")) {
            rs.next();
            return rs.getLong(2);
        }
    }
}
