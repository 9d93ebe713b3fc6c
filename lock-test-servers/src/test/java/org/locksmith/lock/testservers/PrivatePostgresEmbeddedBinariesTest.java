package org.locksmith.lock.testservers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link PrivatePostgres} on zonky's binaries from Maven Central, forced with {@code
 * LOCKSMITH_TEST_POSTGRES_BINARIES=embedded} so that it runs here too, where the machine has binaries of its own: the
 * path a machine with only a JDK takes. Never skipped.
 */
class PrivatePostgresEmbeddedBinariesTest {
    private static String before;

    @BeforeAll
    static void forceEmbeddedBinaries() {
        before = System.setProperty(PrivatePostgres.BINARIES_VARIABLE, "embedded");
    }

    @AfterAll
    static void restoreSetting() {
        if (before == null) {
            System.clearProperty(PrivatePostgres.BINARIES_VARIABLE);
        } else {
            System.setProperty(PrivatePostgres.BINARIES_VARIABLE, before);
        }
    }

    @Test
    void servesQueriesAndKeepsCommittedRowsAcrossACrashAndRestart() throws Exception {
        try (PrivatePostgres pg = PrivatePostgres.start(0)) {
            assertThat(pg.binaries())
                    .as("the binaries of a server started with LOCKSMITH_TEST_POSTGRES_BINARIES=embedded")
                    .startsWith(Path.of(System.getProperty("java.io.tmpdir")));
            String expected = "PostgreSQL " + majorMinor(PostgresBinaries.embeddedVersion()) + " ";
            assertThat(query(pg, "SELECT version()"))
                    .as("the server's version(), against zonky's binaries version")
                    .startsWith(expected);
            execute(pg, "CREATE TABLE survivor (v int)", "INSERT INTO survivor VALUES (42)");

            pg.crash();
            assertThatThrownBy(() -> query(pg, "SELECT 1"))
                    .as("a query to the crashed server")
                    .isInstanceOf(SQLException.class);
            pg.restart();

            assertThat(query(pg, "SELECT v FROM survivor"))
                    .as("a committed row after a crash and restart")
                    .isEqualTo("42");
        }
    }

    @Test
    void pausesAndMakesAStreamingReplicaWithoutPgBasebackup() throws Exception {
        try (PrivatePostgres primary = PrivatePostgres.start(0)) {
            assertThat(primary.binaries().resolve("pg_basebackup"))
                    .as("zonky's binaries (the replica must not need pg_basebackup)")
                    .doesNotExist();
            execute(primary, "CREATE TABLE replicated (v int)", "INSERT INTO replicated VALUES (1)");

            primary.pause();
            try {
                assertThatThrownBy(() -> query(primary, "SELECT 1", "?connectTimeout=1&socketTimeout=1"))
                        .as("a query to the paused server")
                        .isInstanceOf(SQLException.class);
            } finally {
                primary.resume();
            }

            try (PrivatePostgres replica = primary.streamingReplica()) {
                assertThat(query(replica, "SELECT v FROM replicated"))
                        .as("the base backup's row on the replica")
                        .isEqualTo("1");
                execute(primary, "INSERT INTO replicated VALUES (2)");
                await("the row inserted after the backup, streamed to the replica")
                        .atMost(Duration.ofSeconds(30))
                        .until(() -> query(replica, "SELECT count(*) FROM replicated"), "2"::equals);
                assertThat(query(replica, "SELECT pg_is_in_recovery()"))
                        .as("the replica is a standby")
                        .isEqualTo("t");
            }
        }
    }

    private static String majorMinor(String zonkyVersion) {
        return zonkyVersion.substring(0, zonkyVersion.lastIndexOf('.'));
    }

    private static String query(PrivatePostgres pg, String sql) throws SQLException {
        return query(pg, sql, "");
    }

    private static String query(PrivatePostgres pg, String sql, String parameters) throws SQLException {
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl() + parameters, "postgres", "");
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            assertThat(rs.next()).as("a row from " + sql).isTrue();
            return rs.getString(1);
        }
    }

    private static void execute(PrivatePostgres pg, String... statements) throws SQLException {
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl(), "postgres", "");
                Statement s = c.createStatement()) {
            for (String statement : statements) {
                s.execute(statement);
            }
        }
    }
}
