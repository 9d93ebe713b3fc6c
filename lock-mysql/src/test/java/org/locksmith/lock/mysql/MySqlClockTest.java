package org.locksmith.lock.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.testservers.EmbeddedMariaDb;

/**
 * Fencing tokens never go backwards at a daylight-saving fall-back in the session's time zone: the floor of a token
 * (the server clock in microseconds) is read in UTC. Runs on a private MariaDB whose time zone tables this test fills
 * for one zone from the JDK's rules, with the session clock set by {@code SET timestamp} to both sides of the hour
 * that a fall-back repeats.
 */
class MySqlClockTest {
    private static final String ZONE = "Europe/Berlin";
    private static EmbeddedMariaDb server;

    @BeforeAll
    static void startServer() throws SQLException {
        server = EmbeddedMariaDb.start();
        try (Connection c = MySqlTestServer.connect(server.url())) {
            loadZone(c, ZONE);
        }
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    /** Fills the server's time zone tables for {@code zone}, 2000-2040, from the JDK's rules. */
    private static void loadZone(Connection c, String zone) throws SQLException {
        ZoneRules rules = ZoneId.of(zone).getRules();
        long id;
        try (Statement s = c.createStatement()) {
            s.executeUpdate(
                    "INSERT INTO mysql.time_zone (Use_leap_seconds) VALUES ('N')", Statement.RETURN_GENERATED_KEYS);
            try (ResultSet rs = s.getGeneratedKeys()) {
                rs.next();
                id = rs.getLong(1);
            }
        }
        try (PreparedStatement ps =
                c.prepareStatement("INSERT INTO mysql.time_zone_name (Name, Time_zone_id) VALUES (?, ?)")) {
            ps.setString(1, zone);
            ps.setLong(2, id);
            ps.executeUpdate();
        }
        Map<String, Integer> types = new LinkedHashMap<>();
        Instant start = Instant.parse("2000-01-01T00:00:00Z");
        Instant end = Instant.parse("2040-01-01T00:00:00Z");
        type(types, rules.getOffset(start), rules.isDaylightSavings(start));
        try (PreparedStatement transition = c.prepareStatement("INSERT INTO mysql.time_zone_transition"
                + " (Time_zone_id, Transition_time, Transition_type_id) VALUES (?, ?, ?)")) {
            ZoneOffsetTransition t = rules.nextTransition(start);
            while (t != null && t.getInstant().isBefore(end)) {
                Instant at = t.getInstant();
                transition.setLong(1, id);
                transition.setLong(2, at.getEpochSecond());
                transition.setInt(3, type(types, t.getOffsetAfter(), rules.isDaylightSavings(at)));
                transition.executeUpdate();
                t = rules.nextTransition(at);
            }
        }
        try (PreparedStatement type = c.prepareStatement("INSERT INTO mysql.time_zone_transition_type"
                + " (Time_zone_id, Transition_type_id, `Offset`, Is_DST, Abbreviation) VALUES (?, ?, ?, ?, ?)")) {
            for (Map.Entry<String, Integer> e : types.entrySet()) {
                String[] parts = e.getKey().split("/");
                type.setLong(1, id);
                type.setInt(2, e.getValue());
                type.setInt(3, Integer.parseInt(parts[0]));
                type.setInt(4, Integer.parseInt(parts[1]));
                type.setString(5, parts[1].equals("1") ? "DST" : "STD");
                type.executeUpdate();
            }
        }
    }

    private static int type(Map<String, Integer> types, ZoneOffset offset, boolean dst) {
        return types.computeIfAbsent(offset.getTotalSeconds() + "/" + (dst ? 1 : 0), k -> types.size());
    }

    private static HikariDataSource pool() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(MySqlTestServer.jdbcUrl(server.url()));
        config.setUsername("root");
        config.setPassword("");
        config.setMaximumPoolSize(4);
        config.setMinimumIdle(0);
        return new HikariDataSource(config);
    }

    @ParameterizedTest
    @EnumSource(MySqlStrategy.class)
    void tokensKeepRisingAcrossADaylightSavingFallBackWhenTheFenceStateIsLost(MySqlStrategy strategy) throws Exception {
        String table = MySqlTestServer.uniqueTable("clock_" + strategy.urlValue());
        // Berlin fell back on 2026-10-25 at 01:00 UTC (03:00 CEST -> 02:00 CET): 02:00-03:00 local happened twice.
        Instant firstPass = Instant.parse("2026-10-25T00:59:00Z"); // 02:59 CEST
        Instant secondPass = Instant.parse("2026-10-25T01:01:00Z"); // 02:01 CET, two minutes later
        AtomicLong clock = new AtomicLong(firstPass.getEpochSecond());
        try (HikariDataSource pool = pool()) {
            ScriptedDataSource sessions = new ScriptedDataSource(pool);
            sessions.onBorrow(() -> "SET time_zone = '" + ZONE + "', timestamp = " + clock.get());
            try (LockClient client = MySqlLocks.builder()
                    .dataSource(sessions.dataSource())
                    .strategy(strategy)
                    .table(table)
                    .poolSize(2)
                    .build()) {
                long before;
                try (LockLease lease = client.lock("dst").acquire(Duration.ofSeconds(5))) {
                    before = lease.fencingToken();
                }
                // The fence state is lost (restore from an old backup, an operator's DELETE): the floor decides.
                MySqlTestServer.execute(server.url(), "DELETE FROM " + table);
                MySqlTestServer.execute(server.url(), "DELETE FROM " + table + "_fence");
                clock.set(secondPass.getEpochSecond());
                try (LockLease lease = client.lock("dst").acquire(Duration.ofSeconds(5))) {
                    assertThat(lease.fencingToken())
                            .as("token two minutes later, in the repeated hour")
                            .isGreaterThan(before);
                }
            }
        }
    }
}
