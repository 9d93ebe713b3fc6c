package org.locksmith.lock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;
import org.locksmith.lock.testservers.EmbeddedZooKeeper;
import org.locksmith.lock.testservers.PrivateRedis;
import redis.clients.jedis.Jedis;

/** Errors come in one line on stderr with a distinct status, and without a stack trace unless --verbose. */
class ErrorsTest {

    private static final Duration LIMIT = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private void assertOneLine(Cli cli, int status, String... fragments) throws Exception {
        assertThat(cli.await(LIMIT)).as("%s", cli).isEqualTo(status);
        String err = cli.err().strip();
        assertThat(err)
                .as("%s", cli)
                .startsWith("locksmith: ")
                .doesNotContain("\n")
                .doesNotContain("\tat ");
        assertThat(err).contains(fragments);
    }

    @Test
    void unknownOption() throws Exception {
        assertOneLine(
                Cli.start(dir, "run", "--url", "redis://127.0.0.1:6379", "--key", "k", "--bogus", "--", "true"),
                ExitStatus.USAGE,
                "Unknown option: '--bogus'",
                "locksmith run --help");
    }

    @Test
    void badDuration() throws Exception {
        assertOneLine(
                Cli.start(dir, "run", "--url", "redis://127.0.0.1:6379", "--key", "k", "--wait", "5x", "--", "true"),
                ExitStatus.USAGE,
                "'5x' is not a duration");
    }

    @Test
    void malformedUrlAndUnknownParameter() throws Exception {
        assertOneLine(
                Cli.start(dir, "run", "--url", "nonsense", "--key", "k", "--", "true"), ExitStatus.USAGE, "nonsense");
        assertOneLine(
                Cli.start(dir, "run", "--url", "redis://127.0.0.1:6379?colour=red", "--key", "k", "--", "true"),
                ExitStatus.USAGE,
                "colour");
    }

    @Test
    void noUrlButLocksmithUrlIsRead() throws Exception {
        assertOneLine(Cli.start(dir, "run", "--key", "k", "--", "true"), ExitStatus.USAGE, "LOCKSMITH_URL");
        Cli fromEnv = Cli.start(
                dir,
                Map.of("LOCKSMITH_URL", "redis://127.0.0.1:1?connectTimeoutMs=300"),
                "run",
                "--key",
                "k",
                "--",
                "true");
        assertOneLine(fromEnv, ExitStatus.STORE_UNAVAILABLE, "lock store unavailable", "127.0.0.1:1");
    }

    @Test
    void verboseShowsTheStackTrace() throws Exception {
        Cli cli = Cli.start(
                dir,
                "run",
                "--verbose",
                "--url",
                "redis://127.0.0.1:1?connectTimeoutMs=300",
                "--key",
                "k",
                "--",
                "true");
        assertThat(cli.await(LIMIT)).isEqualTo(ExitStatus.STORE_UNAVAILABLE);
        assertThat(cli.err()).contains("\tat ").contains("LockBackendException");
    }

    @Test
    void commandNotFound() throws Exception {
        assertOneLine(
                Cli.start(
                        dir,
                        "run",
                        "--url",
                        TestServers.redis(),
                        "--key",
                        "locksmith-cli-test:nocmd",
                        "--",
                        "/nonexistent/command"),
                ExitStatus.COMMAND_NOT_STARTED,
                "cannot run '/nonexistent/command'");
    }

    @Test
    void leaseOnZooKeeperSaysItDoesNotApply() throws Exception {
        Cli cli = Cli.start(
                dir, "run", "--url", TestServers.url("zookeeper"), "--key", "lease", "--lease", "5s", "--", "true");
        assertThat(cli.await(LIMIT)).as("%s", cli).isZero();
        assertThat(cli.err().strip())
                .isEqualTo("locksmith: --lease does not apply to zookeeper: its locks are bound to locksmith's"
                        + " session with the store (freed when it ends), not to a lease");
    }

    /** A bad key is the user's input (64), found before the store is opened: even with the store down. */
    @Test
    void badKeyIsAUsageErrorEvenWithTheStoreDown() throws Exception {
        String down = "redis://127.0.0.1:1?connectTimeoutMs=300";
        assertOneLine(
                Cli.start(dir, "run", "--url", down, "--key", "", "--", "true"),
                ExitStatus.USAGE,
                "--key must be 1 to 1024 characters long");
        assertOneLine(
                Cli.start(dir, "run", "--url", down, "--key", "k".repeat(1025), "--", "true"),
                ExitStatus.USAGE,
                "not 1025");
    }

    /** Every backend's store out of reach is 69, not a usage error, and says so in one line. */
    @ParameterizedTest
    @ValueSource(
            strings = {
                "redis://127.0.0.1:1?connectTimeoutMs=300",
                "mysql://root@127.0.0.1:1/test?timeoutMs=500",
                "zookeeper://127.0.0.1:1?connectionTimeoutMs=500"
            })
    void unreachableStoreIsUnavailable(String url) throws Exception {
        assertOneLine(
                Cli.start(dir, "run", "--url", url, "--key", "k", "--", "true"),
                ExitStatus.STORE_UNAVAILABLE,
                "lock store unavailable");
        assertOneLine(
                Cli.start(dir, "check", "--url", url, "--tests", "c01.*"),
                ExitStatus.STORE_UNAVAILABLE,
                "lock store unavailable");
    }

    /**
     * The store dies while locksmith waits for the lock: 69 within the store's timeout, the command never runs, and
     * stderr holds locksmith's one line only (the backend logs its lost connection, which only --verbose shows).
     */
    @Test
    void redisDyingWhileWaitingIsUnavailable() throws Exception {
        Path ran = dir.resolve("ran");
        try (PrivateRedis redis = PrivateRedis.start()) {
            String url = redis.url("timeoutMs=1000");
            LockClient holder = Locks.open(url);
            holder.lock("busy").acquire(Duration.ofSeconds(5));
            try (Cli cli = Cli.start(
                    dir, "run", "--url", url, "--key", "busy", "--wait", "2m", "--", "touch", ran.toString())) {
                // Waiting means blocked in BLPOP on the key's wake-up list.
                try (Jedis admin = redis.jedis()) {
                    await().atMost(LIMIT)
                            .until(() -> admin.clientList().contains("cmd=blpop") || !cli.process.isAlive());
                }
                redis.close();
                assertOneLine(cli, ExitStatus.STORE_UNAVAILABLE, "locksmith: lock store unavailable");
            } finally {
                try {
                    holder.close();
                } catch (RuntimeException gone) {
                    // the server is gone
                }
            }
        }
        assertThat(ran).doesNotExist();
    }

    /** The same with ZooKeeper: the server stops while locksmith waits. */
    @Test
    void zooKeeperDyingWhileWaitingIsUnavailable() throws Exception {
        Path ran = dir.resolve("ran");
        try (EmbeddedZooKeeper zk = new EmbeddedZooKeeper()) {
            String url =
                    "zookeeper://" + zk.connectString() + "/cli-errors?sessionTimeoutMs=2000&connectionTimeoutMs=1000";
            LockClient holder = Locks.open(url);
            holder.lock("busy").acquire(Duration.ofSeconds(5));
            try (Cli cli = Cli.startWaiting(dir, url, "busy", ran)) {
                zk.close();
                assertThat(cli.await(LIMIT)).as("%s", cli).isEqualTo(ExitStatus.STORE_UNAVAILABLE);
                assertThat(cli.err()).contains("locksmith: lock store unavailable");
            } finally {
                try {
                    holder.close();
                } catch (RuntimeException gone) {
                    // the server is gone
                }
            }
        }
        assertThat(ran).doesNotExist();
    }
}
