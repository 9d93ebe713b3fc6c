package org.locksmith.lock.mysql;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;
import org.locksmith.lock.spi.LockUrl;
import org.locksmith.lock.testservers.TestMySql;

/**
 * The MySQL server of these tests ({@link TestMySql}: {@code LOCKSMITH_TEST_MYSQL_URL}, else Testcontainers, else an
 * embedded MariaDB) and what the tests do on it through lock URLs: databases, tables and connections of their own.
 */
final class MySqlTestServer {
    private static final ReentrantLock LOCK = new ReentrantLock();
    private static String twoShardUrl;

    private MySqlTestServer() {}

    /** The base URL ({@code mysql://user@host:port/db}, no parameters) of the server the tests use. */
    static String baseUrl() {
        return TestMySql.baseUrl();
    }

    /**
     * The test server as two shards: its database and a second one on the same server, {@code <db>_s2_<random>},
     * created once per test JVM and dropped when it exits, so runs never share it or leave it behind.
     */
    static String twoShardUrl() {
        LOCK.lock();
        try {
            if (twoShardUrl == null) {
                String base = baseUrl();
                String second = LockUrl.parse(base).path() + "_s2_"
                        + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
                execute(base, "CREATE DATABASE " + second);
                Runtime.getRuntime()
                        .addShutdownHook(new Thread(
                                () -> execute(base, "DROP DATABASE IF EXISTS " + second),
                                "locksmith-test-drop-shard-db"));
                twoShardUrl = base + "," + second;
            }
            return twoShardUrl;
        } finally {
            LOCK.unlock();
        }
    }

    /**
     * A fresh database on the test server for one test, named {@code <db>_<what>_<random>}; the caller drops it
     * ({@link #dropDatabase}).
     */
    static String privateDatabaseUrl(String what) {
        String base = baseUrl();
        String db = LockUrl.parse(base).path() + "_" + what + "_"
                + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
        execute(base, "CREATE DATABASE " + db);
        return base.substring(0, base.lastIndexOf('/') + 1) + db;
    }

    static void dropDatabase(String lockUrl) {
        execute(baseUrl(), "DROP DATABASE IF EXISTS " + LockUrl.parse(lockUrl).path());
    }

    /** A fresh table name for one test class. */
    static String uniqueTable(String what) {
        return "lt_" + what + "_"
                + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
    }

    static String jdbcUrl(String lockUrl) {
        LockUrl u = LockUrl.parse(lockUrl);
        LockUrl.HostAndPort h = u.hosts().get(0);
        return "jdbc:mysql://" + h.host() + ":" + h.port(3306) + "/" + u.path().split(",")[0];
    }

    /** An admin connection to the database of {@code lockUrl} (its first, if sharded). */
    static Connection connect(String lockUrl) throws SQLException {
        LockUrl u = LockUrl.parse(lockUrl);
        return DriverManager.getConnection(
                jdbcUrl(lockUrl), u.user().orElse("root"), u.password().orElse(""));
    }

    /**
     * A HikariCP pool on the test server as an application configures one (server default isolation, autocommit,
     * HikariCP's defaults otherwise): for the tests of {@link MySqlLocks#using}.
     */
    static com.zaxxer.hikari.HikariDataSource applicationPool(int size) {
        String base = baseUrl();
        LockUrl u = LockUrl.parse(base);
        com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
        config.setJdbcUrl(jdbcUrl(base));
        config.setUsername(u.user().orElse("root"));
        config.setPassword(u.password().orElse(""));
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(0);
        return new com.zaxxer.hikari.HikariDataSource(config);
    }

    static void execute(String lockUrl, String sql) {
        try (Connection c = connect(lockUrl);
                Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException("could not run '" + sql + "': " + e.getMessage(), e);
        }
    }

    /** The server's id of the session of {@code c} ({@code CONNECTION_ID()}), from either driver, without I/O. */
    static long sessionId(Connection c) throws SQLException {
        if (c.isWrapperFor(com.mysql.cj.jdbc.JdbcConnection.class)) {
            return c.unwrap(com.mysql.cj.jdbc.JdbcConnection.class).getId();
        }
        return c.unwrap(org.mariadb.jdbc.Connection.class).getThreadId();
    }

    static void dropTables(String lockUrl, String table) {
        execute(lockUrl, "DROP TABLE IF EXISTS " + table + ", " + table + "_fence, " + table + "_shard");
    }
}
