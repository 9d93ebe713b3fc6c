package org.locksmith.lock.testservers;

import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A private PgBouncer on a free port of 127.0.0.1 in front of the test PostgreSQL ({@link TestPostgres}), in session
 * or transaction pool mode, with trust authentication for that server's user. The binary is {@value
 * #BIN_ENVIRONMENT_VARIABLE} if set, else {@code pgbouncer} on the {@code PATH} or in {@code /usr/sbin} (Debian's
 * {@code pgbouncer} package; {@code .ci/run} installs it). Run as root, it runs PgBouncer as {@code postgres} or
 * {@code nobody}, since PgBouncer refuses root. Its owner must close it.
 */
public final class PrivatePgBouncer implements AutoCloseable {
    /** Names the {@code pgbouncer} executable, where the default places are not right. */
    public static final String BIN_ENVIRONMENT_VARIABLE = "LOCKSMITH_TEST_PGBOUNCER";

    /** PgBouncer's {@code pool_mode}: when a client's server session goes back to the pool. */
    public enum PoolMode {
        /** When the client disconnects: a client keeps one server session. */
        SESSION,
        /** After each transaction: consecutive statements of a client may run on different server sessions. */
        TRANSACTION
    }

    private final Path dir;
    private final int port;
    private final String database;
    private final String user;
    private final Process process;

    private PrivatePgBouncer(Path dir, int port, String database, String user, Process process) {
        this.dir = dir;
        this.port = port;
        this.database = database;
        this.user = user;
        this.process = process;
    }

    /**
     * Starts PgBouncer in front of the test PostgreSQL and returns once it serves a query.
     *
     * @param poolSize server sessions per database and user ({@code default_pool_size})
     * @throws IllegalStateException saying what to install or set, if it cannot start
     */
    public static PrivatePgBouncer start(PoolMode mode, int poolSize) {
        URI server = URI.create(TestPostgres.baseUrl());
        String database = server.getPath().substring(1);
        String user = TestPostgres.user();
        Path binary = binary();
        Path dir = null;
        try {
            dir = Files.createTempDirectory("locksmith-pgbouncer-");
            int port = PrivateRedis.freePort();
            Files.writeString(
                    dir.resolve("pgbouncer.ini"),
                    String.join(
                            "\n",
                            "[databases]",
                            database + " = host=" + server.getHost() + " port="
                                    + (server.getPort() < 0 ? 5432 : server.getPort()) + " dbname="
                                    + database + " user=" + user
                                    + (TestPostgres.password().isEmpty() ? "" : " password=" + TestPostgres.password()),
                            "[pgbouncer]",
                            "listen_addr = 127.0.0.1",
                            "listen_port = " + port,
                            "unix_socket_dir =",
                            "auth_type = trust",
                            "auth_file = " + dir.resolve("userlist.txt"),
                            "pool_mode = " + mode.name().toLowerCase(Locale.ROOT),
                            "default_pool_size = " + poolSize,
                            "max_client_conn = 200",
                            // the JDBC driver sends extra_float_digits; PgBouncer refuses parameters it does not know
                            "ignore_startup_parameters = extra_float_digits",
                            ""),
                    StandardCharsets.UTF_8);
            Files.writeString(dir.resolve("userlist.txt"), "\"" + user + "\" \"\"\n", StandardCharsets.UTF_8);
            PrivatePostgres.output(List.of("chmod", "-R", "a+rX", dir.toString()));
            List<String> command = new ArrayList<>();
            if ("root".equals(System.getProperty("user.name"))) {
                // PgBouncer refuses root: run it as the private PostgreSQL's user (postgres, else nobody)
                PrivatePostgres.ServerUser runAs = PrivatePostgres.serverUser();
                command.addAll(List.of(
                        "setpriv",
                        "--reuid=" + runAs.name(),
                        "--regid=" + runAs.group(),
                        "--init-groups",
                        "--reset-env",
                        "--"));
            }
            command.addAll(
                    List.of(binary.toString(), dir.resolve("pgbouncer.ini").toString()));
            Process p = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("pgbouncer.log").toFile())
                    .start();
            PrivatePgBouncer bouncer = new PrivatePgBouncer(dir, port, database, user, p);
            bouncer.awaitServing();
            return bouncer;
        } catch (IOException | RuntimeException e) {
            String log = dir == null ? "" : "; its log: " + readLog(dir);
            deleteTree(dir);
            throw new IllegalStateException("could not start PgBouncer (" + binary + "): " + e + log, e);
        }
    }

    /** The JDBC URL of the database through PgBouncer, with the given driver parameters appended. */
    public String jdbcUrl(String parameters) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + database + (parameters.isEmpty() ? "" : "?" + parameters);
    }

    /** The Locksmith URL of the database through PgBouncer (without parameters). */
    public String url() {
        return "postgresql://" + user + "@127.0.0.1:" + port + "/" + database;
    }

    public String user() {
        return user;
    }

    private void awaitServing() {
        await("PgBouncer serving a query")
                .atMost(Duration.ofSeconds(15))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> {
                    if (!process.isAlive()) {
                        throw new IllegalStateException("PgBouncer exited with " + process.exitValue());
                    }
                    try (Connection c = DriverManager.getConnection(jdbcUrl(""), user, TestPostgres.password())) {
                        c.createStatement().execute("SELECT 1");
                        return true;
                    } catch (SQLException notYet) {
                        return false;
                    }
                });
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        deleteTree(dir);
    }

    /**
     * Why no PgBouncer can be started on this machine, or empty if one can: no {@value #BIN_ENVIRONMENT_VARIABLE}
     * and no {@code pgbouncer} on the {@code PATH} or in {@code /usr/sbin}. PgBouncer is the one tool the tests need
     * that neither a JDK nor Maven Central brings, so its tests skip with this notice rather than fail. A machine that
     * must run them (CI) sets {@value #BIN_ENVIRONMENT_VARIABLE}: then this is always empty, and a missing executable
     * fails {@link #start}.
     *
     * @return a notice naming what to install, or empty
     */
    public static Optional<String> unavailable() {
        return find().isPresent()
                ? Optional.empty()
                : Optional.of("No pgbouncer executable (not on the PATH, not /usr/sbin/pgbouncer, "
                        + BIN_ENVIRONMENT_VARIABLE + " unset): the PgBouncer tests are SKIPPED. Install PgBouncer 1.x"
                        + " to run them (Debian/Ubuntu: apt-get install pgbouncer; macOS: brew install pgbouncer), or"
                        + " set " + BIN_ENVIRONMENT_VARIABLE + " to its path; .ci/run installs it");
    }

    private static Optional<Path> find() {
        String env = System.getenv(BIN_ENVIRONMENT_VARIABLE);
        if (env != null && !env.isBlank()) {
            return Optional.of(Path.of(env.trim()));
        }
        List<Path> candidates = new ArrayList<>();
        for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (!d.isEmpty()) {
                candidates.add(Path.of(d, "pgbouncer"));
            }
        }
        candidates.add(Path.of("/usr/sbin/pgbouncer"));
        return candidates.stream().filter(Files::isExecutable).findFirst();
    }

    private static Path binary() {
        Path binary =
                find().orElseThrow(() -> new IllegalStateException(unavailable().orElseThrow()));
        if (!Files.isExecutable(binary)) {
            throw new IllegalStateException(BIN_ENVIRONMENT_VARIABLE + "=" + binary + " is not an executable: install"
                    + " PgBouncer (Debian: apt-get install pgbouncer) or correct the variable");
        }
        return binary;
    }

    private static String readLog(Path dir) {
        try {
            return Files.readString(dir.resolve("pgbouncer.log"), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(none)";
        }
    }

    private static void deleteTree(Path dir) {
        if (dir == null) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException e) {
            // a temporary directory: the OS cleans it up
        }
    }
}
