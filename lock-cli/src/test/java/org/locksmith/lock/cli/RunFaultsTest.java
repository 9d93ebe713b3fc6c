package org.locksmith.lock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.spi.LockUrl;
import org.locksmith.lock.testservers.EmbeddedZooKeeper;
import redis.clients.jedis.Jedis;

/**
 * The paths of {@code locksmith run} where things go wrong: the lock lost while the command runs (provoked for
 * real in the store), and SIGTERM/SIGINT to locksmith. Each checks the exit status, that the command was stopped,
 * and that the lock is free afterwards.
 */
class RunFaultsTest {

    private static final Duration LIMIT = Duration.ofSeconds(60);
    private static final Duration STARTED = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private static long pid(Path pidFile) throws Exception {
        return Long.parseLong(Files.readString(pidFile, StandardCharsets.UTF_8).trim());
    }

    /**
     * A command that starts a grandchild ({@code sleep 300} in the background), records both pids in {@code dir}
     * ({@code child}, {@code grandchild}), touches {@code dir/ready} and waits for the grandchild. {@code trap} is
     * run first: it sets the shell's signal handling.
     */
    private static String[] familyCommand(Path dir, String trap) {
        return new String[] {
            "sh",
            "-c",
            trap + "; sleep 300 & echo $! > \"$0/grandchild\"; echo $$ > \"$0/child\"; touch \"$0/ready\"; wait",
            dir.toString()
        };
    }

    /** Alive, and not a zombie waiting for a parent that does not reap it (the grandchild's is not locksmith). */
    static boolean alive(long pid) {
        if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
            try {
                String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
                return stat.charAt(stat.lastIndexOf(')') + 2) != 'Z';
            } catch (java.io.IOException gone) {
                return !Files.isDirectory(Path.of("/proc"));
            }
        }
        return false;
    }

    /** The command and its grandchild both ended (at once, or within a second of locksmith's end). */
    private void assertFamilyStopped(Path family) throws Exception {
        long child = pid(family.resolve("child"));
        long grandchild = pid(family.resolve("grandchild"));
        await().atMost(Duration.ofSeconds(1)).until(() -> !alive(child) && !alive(grandchild));
    }

    /** {@code locksmith run OPTIONS -- <familyCommand(family, trap)>}, once the command has started. */
    private Cli startFamily(Path family, String trap, String... options) throws Exception {
        Cli cli = Cli.start(
                dir,
                concat(
                        concat(new String[] {"run"}, options),
                        concat(new String[] {"--"}, familyCommand(family, trap))));
        try {
            await().atMost(STARTED).until(() -> Files.exists(family.resolve("ready")) || !cli.process.isAlive());
            assertThat(family.resolve("ready"))
                    .as("the command started: %s", cli)
                    .exists();
            return cli;
        } catch (AssertionError | RuntimeException e) {
            cli.close();
            throw e;
        }
    }

    private static void assertFree(String url, String key) throws Exception {
        try (LockClient probe = Locks.open(url)) {
            Optional<LockLease> lease = probe.lock(key).tryAcquire(Duration.ofSeconds(5));
            assertThat(lease)
                    .as("the lock '%s' is free after locksmith ended", key)
                    .isPresent();
            lease.get().release();
        }
    }

    private static String[] concat(String[] a, String... b) {
        List<String> all = new ArrayList<>(List.of(a));
        all.addAll(List.of(b));
        return all.toArray(String[]::new);
    }

    /** Redis: the lock's state deleted behind the holder (as an operator's DEL or an eviction would). */
    @Test
    void lockLostWhenRedisStateIsDeleted() throws Exception {
        String prefix = "locksmith-cli-lost-" + UUID.randomUUID() + ":";
        String url = TestServers.redis() + (TestServers.redis().contains("?") ? "&" : "?") + "prefix=" + prefix;
        String key = "job";
        Path family = Files.createDirectory(dir.resolve("family"));
        try (Cli cli = startFamily(family, "true", "--url", url, "--key", key, "--lease", "1s", "--grace", "2s")) {
            deleteRedisState(url, prefix);
            assertThat(cli.await(LIMIT)).as("%s", cli).isEqualTo(ExitStatus.LOCK_LOST);
            assertThat(cli.err()).contains("lost the lock 'job'").contains("the command was terminated");
            assertFamilyStopped(family);
        }
        assertFree(url, key);
    }

    private static void deleteRedisState(String url, String prefix) {
        LockUrl.HostAndPort server = LockUrl.parse(url).hosts().get(0);
        try (Jedis jedis = new Jedis(server.host(), server.port(6379))) {
            var keys = jedis.keys(prefix + "*");
            assertThat(keys).as("the held lock's state in Redis").isNotEmpty();
            jedis.del(keys.toArray(String[]::new));
        }
    }

    /**
     * A backend that does not declare LOSS_DETECTION: locksmith says once that it cannot watch the lock, runs the
     * command all the same, and finds the loss when the command has ended (76: the work was not protected).
     */
    @Test
    void lossFoundAtTheEndWhereTheBackendDoesNotDetectLoss() throws Exception {
        String prefix = "locksmith-cli-noloss-" + UUID.randomUUID() + ":";
        LockUrl redis = LockUrl.parse(TestServers.redis());
        String url =
                RedisVariantsProvider.NO_LOSS_DETECTION + "://" + redis.hosts().get(0) + "?prefix=" + prefix;
        String key = "job";
        Path ready = dir.resolve("ready");
        // Runs until the test writes a line to its stdin (locksmith's, which the command inherits).
        try (Cli cli = Cli.start(
                dir,
                "run",
                "--url",
                url,
                "--key",
                key,
                "--",
                "sh",
                "-c",
                "touch \"$0\"; read line",
                ready.toString())) {
            await().atMost(STARTED).until(() -> Files.exists(ready) || !cli.process.isAlive());
            assertThat(ready).as("the command started: %s", cli).exists();
            deleteRedisState(TestServers.redis(), prefix);
            try (var stdin = cli.process.getOutputStream()) {
                stdin.write("done\n".getBytes(StandardCharsets.UTF_8));
            }
            assertThat(cli.await(LIMIT)).as("%s", cli).isEqualTo(ExitStatus.LOCK_LOST);
            String err = cli.err();
            assertThat(err)
                    .contains("redis-without-loss-detection does not report a lost lock while the command runs")
                    .contains("lost the lock 'job'")
                    .contains("the command had finished (exit status 0) but its work was not protected");
            assertThat(err.split("does not report a lost lock", -1))
                    .as("said once: %s", err)
                    .hasSize(2);
        }
        assertFree(url, key);
    }

    /** MySQL: the holder's connection killed behind it (KILL CONNECTION): InnoDB drops its row lock at once. */
    @Test
    void lockLostWhenMySqlConnectionIsKilled() throws Exception {
        LockUrl base = LockUrl.parse(TestServers.mysql());
        // A database of this run alone, created and dropped here: killing its connections hits no one else's, and
        // nothing is left in the shared server.
        String database =
                "locksmith_cli_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
        String jdbc = "jdbc:mysql://" + base.hosts().get(0).host() + ":"
                + base.hosts().get(0).port(3306) + "/" + base.path();
        String user = base.user().orElse("root");
        String password = base.password().orElse("");
        try (Connection admin = DriverManager.getConnection(jdbc, user, password);
                Statement st = admin.createStatement()) {
            st.execute("CREATE DATABASE " + database);
            try {
                lockLostWhenConnectionsAreKilled(st, base, database);
            } finally {
                st.execute("DROP DATABASE IF EXISTS " + database);
            }
        }
    }

    private void lockLostWhenConnectionsAreKilled(Statement st, LockUrl base, String database) throws Exception {
        String url =
                TestServers.mysql().replace("/" + base.path(), "/" + database).split("\\?")[0] + "?checkIntervalMs=200";
        String key = "job-" + UUID.randomUUID();
        Path family = Files.createDirectory(dir.resolve("family"));
        try (Cli cli = startFamily(family, "true", "--url", url, "--key", key, "--grace", "2s")) {
            List<Long> ids = new ArrayList<>();
            try (ResultSet rs = st.executeQuery("SELECT ID FROM information_schema.PROCESSLIST WHERE DB = '" + database
                    + "' AND ID <> CONNECTION_ID()")) {
                while (rs.next()) {
                    ids.add(rs.getLong(1));
                }
            }
            assertThat(ids).as("locksmith's connections to %s", database).isNotEmpty();
            for (long id : ids) {
                try {
                    st.execute("KILL CONNECTION " + id);
                } catch (java.sql.SQLException gone) {
                    // already closed
                }
            }
            assertThat(cli.await(LIMIT)).as("%s", cli).isEqualTo(ExitStatus.LOCK_LOST);
            assertThat(cli.err()).contains("lost the lock");
            assertFamilyStopped(family);
        }
        assertFree(url, key);
    }

    /**
     * ZooKeeper: the holder's lock node deleted behind its back (an operator, a clean-up script). The holder's watch
     * reports the loss, and the command is stopped.
     */
    @Test
    void lockLostWhenZooKeeperNodeIsDeleted() throws Exception {
        try (EmbeddedZooKeeper zk = new EmbeddedZooKeeper();
                CuratorFramework admin =
                        CuratorFrameworkFactory.newClient(zk.connectString(), new RetryNTimes(20, 100))) {
            admin.start();
            String url = "zookeeper://" + zk.connectString() + "/locksmith-cli-lost?sessionTimeoutMs=2000";
            String key = "job";
            Path family = Files.createDirectory(dir.resolve("family"));
            try (Cli cli = startFamily(family, "true", "--url", url, "--key", key, "--grace", "2s")) {
                admin.delete().deletingChildrenIfNeeded().forPath("/locksmith-cli-lost/" + key);
                assertThat(cli.await(LIMIT)).as("%s", cli).isEqualTo(ExitStatus.LOCK_LOST);
                assertThat(cli.err()).contains("lost the lock 'job'").contains("the command was terminated");
                assertFamilyStopped(family);
            }
            assertFree(url, key);
        }
    }

    /**
     * SIGTERM or SIGINT to locksmith: forwarded to the command's whole group as the same signal (a command may
     * handle Ctrl-C differently from a shutdown), the lock released, status 128 + signal. The shell's background
     * job ignores SIGINT (POSIX, without job control), so after SIGINT it is the SIGKILL to the group after --grace
     * that ends it, although the command itself ended at once.
     */
    @ParameterizedTest
    @CsvSource({"TERM, zookeeper, 143", "INT, redis, 130"})
    void signalIsForwardedToTheGroupAsItself(String signal, String backend, int status) throws Exception {
        String url = TestServers.url(backend);
        String key = "locksmith-cli-test:signal:" + UUID.randomUUID();
        Path family = Files.createDirectory(dir.resolve("family"));
        String trap = "trap 'echo TERM > \"$0/trapped\"; exit 7' TERM; trap 'echo INT > \"$0/trapped\"; exit 8' INT";
        try (Cli cli = startFamily(family, trap, "--url", url, "--key", key, "--grace", "1s")) {
            signal(cli, signal);
            assertThat(cli.await(LIMIT)).as("%s", cli).isEqualTo(status);
            assertThat(family.resolve("trapped")).as("the command got a signal").exists();
            assertThat(Files.readString(family.resolve("trapped")).trim()).isEqualTo(signal);
            assertFamilyStopped(family);
        }
        assertFree(url, key);
    }

    /**
     * SIGTERM to locksmith while the command's group handles it at once: locksmith exits as soon as the group is gone,
     * not at the end of --grace. (It looked at the group once after the command ended; a grandchild still dying at
     * that instant made it wait out the whole grace period, about one run in three.) Three runs with 30 s of grace.
     */
    @Test
    void sigtermEndsLocksmithAsSoonAsTheGroupIsGoneNotAtTheEndOfTheGrace() throws Exception {
        String url = TestServers.url("redis");
        for (int run = 0; run < 3; run++) {
            String key = "locksmith-cli-test:prompt:" + UUID.randomUUID();
            Path family = Files.createDirectory(dir.resolve("family-" + run));
            try (Cli cli = startFamily(family, "trap 'exit 0' TERM", "--url", url, "--key", key, "--grace", "30s")) {
                long start = System.nanoTime();
                signal(cli, "TERM");
                assertThat(cli.await(LIMIT)).as("%s", cli).isEqualTo(143);
                assertThat(Duration.ofNanos(System.nanoTime() - start))
                        .as("run %d: locksmith's exit after SIGTERM, with --grace 30s", run)
                        .isLessThan(Duration.ofSeconds(5));
                assertFamilyStopped(family);
            }
            assertFree(url, key);
        }
    }

    private static void signal(Cli cli, String name) throws Exception {
        Process kill = new ProcessBuilder("kill", "-s", name, Long.toString(cli.process.pid())).start();
        assertThat(kill.waitFor()).isZero();
    }

    /**
     * SIGTERM while waiting for the lock, per backend: locksmith stops waiting promptly, leaves nothing queued or
     * held, status 143.
     */
    @ParameterizedTest
    @ValueSource(strings = {"redis", "mysql", "zookeeper"})
    void sigtermWhileWaitingStopsTheWait(String backend) throws Exception {
        String url = TestServers.url(backend);
        String key = "locksmith-cli-test:waiting:" + UUID.randomUUID();
        Path ran = dir.resolve("ran");
        try (LockClient holder = Locks.open(url)) {
            LockLease lease = holder.lock(key).acquire(Duration.ofSeconds(10));
            try (Cli cli = Cli.startWaiting(dir, url, key, ran)) {
                long t0 = System.nanoTime();
                cli.process.destroy(); // SIGTERM
                assertThat(cli.await(LIMIT)).as("%s", cli).isEqualTo(ExitStatus.SIGNAL_BASE + 15);
                assertThat(Duration.ofNanos(System.nanoTime() - t0))
                        .as("stopped waiting promptly")
                        .isLessThan(Duration.ofSeconds(3));
            }
            lease.release();
        }
        assertThat(ran).as("the command never ran").doesNotExist();
        assertFree(url, key);
    }

    /**
     * A signal during locksmith's first attempt at the lock, before the command starts (the store is slow to
     * answer): locksmith ends promptly with 128 + the signal, the command never runs, and nothing is held.
     */
    @ParameterizedTest
    @CsvSource({"0, TERM, 143", "2m, INT, 130"})
    void signalDuringTheFirstAttempt(String wait, String signal, int status) throws Exception {
        String prefix = "locksmith-cli-slow-" + UUID.randomUUID() + ":";
        LockUrl redis = LockUrl.parse(TestServers.redis());
        String url = RedisVariantsProvider.SLOW + "://" + redis.hosts().get(0) + "?prefix=" + prefix;
        Path ran = dir.resolve("ran");
        try (Cli cli =
                Cli.start(dir, "run", "--url", url, "--key", "job", "--wait", wait, "--", "touch", ran.toString())) {
            await().atMost(STARTED)
                    .until(() -> cli.err().contains(RedisVariantsProvider.SLOW_ATTEMPT) || !cli.process.isAlive());
            assertThat(cli.err()).as("%s", cli).contains(RedisVariantsProvider.SLOW_ATTEMPT);
            long t0 = System.nanoTime();
            signal(cli, signal);
            assertThat(cli.await(LIMIT)).as("%s", cli).isEqualTo(status);
            assertThat(Duration.ofNanos(System.nanoTime() - t0))
                    .as("ended promptly: %s", cli)
                    .isLessThan(Duration.ofSeconds(3));
        }
        assertThat(ran).as("the command never ran").doesNotExist();
        assertFree(TestServers.redis() + (TestServers.redis().contains("?") ? "&" : "?") + "prefix=" + prefix, "job");
    }

    /** SIGINT to locksmith: a command that ignores SIGINT and SIGTERM is killed with its group after --grace. */
    @Test
    void sigintStopsEvenACommandThatIgnoresIt() throws Exception {
        String url = TestServers.url("redis");
        String key = "locksmith-cli-test:sigint:" + UUID.randomUUID();
        Path family = Files.createDirectory(dir.resolve("family"));
        try (Cli cli = startFamily(family, "trap '' INT TERM", "--url", url, "--key", key, "--grace", "1s")) {
            signal(cli, "INT");
            assertThat(cli.await(LIMIT)).as("%s", cli).isEqualTo(ExitStatus.SIGNAL_BASE + 2);
            assertFamilyStopped(family);
        }
        assertFree(url, key);
    }
}
