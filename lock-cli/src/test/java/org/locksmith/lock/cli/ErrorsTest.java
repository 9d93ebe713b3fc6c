package org.locksmith.lock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
}
