package org.locksmith.lock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code locksmith demo} and {@code locksmith check}, run as a user runs them. */
class DemoAndCheckTest {

    @TempDir
    Path dir;

    /**
     * With nothing but its in-process server (Redis, MySQL and PostgreSQL pointed at closed ports), the demo ends by itself
     * within its bound, shows a killed holder's lock passing on, and prints the table.
     */
    @Test
    void demoNeedsNoServerAndEndsWithTheTable() throws Exception {
        long t0 = System.nanoTime();
        try (Cli demo = Cli.start(
                dir,
                "demo",
                "--duration",
                "8s",
                "--workers",
                "3",
                // the TCK's latency allowances, stretched: this test shares 2 cores with other builds
                "--time-factor",
                "3",
                "--redis-url",
                "redis://127.0.0.1:1",
                "--mysql-url",
                "mysql://root@127.0.0.1:1/test",
                "--postgres-url",
                "postgresql://postgres@127.0.0.1:1/test")) {
            assertThat(demo.await(Duration.ofSeconds(120))).as("%s", demo).isZero();
            String out = demo.out();
            assertThat(out)
                    .contains("worker-1", "holds", "token", "waited")
                    .contains("KILLED with SIGKILL")
                    .contains("passed on from the killed")
                    .contains("redis: not reachable", "mysql: not reachable", "postgres: not reachable")
                    .contains("| contract | zookeeper |")
                    .contains("| c01 Mutual exclusion | pass |")
                    .contains("| declared features |")
                    .contains("Demo finished");
            assertThat(out).doesNotContain("FAIL").doesNotContain("!! token did not rise");
            assertThat(demo.err()).doesNotContain("Exception");
        }
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(120));
    }

    /** check against a live PostgreSQL: the provider is found through the command's class path. */
    @Test
    void checkAgainstLivePostgres() throws Exception {
        try (Cli check = Cli.start(
                dir,
                "check",
                "--url",
                TestServers.postgres(),
                "--tests",
                "c01_mutualExclusion_severalClients|c10_fencing_tokensRiseAcrossClients|c14.*",
                "--time-factor",
                "3")) {
            assertThat(check.await(Duration.ofSeconds(120))).as("%s", check).isZero();
            assertThat(check.out())
                    .contains("backend postgresql, declares")
                    .contains("using sessionTimeoutMs=4000")
                    .contains("| contract | postgresql |")
                    .contains("| c01 Mutual exclusion | pass |")
                    .containsPattern("\\d+ passed, 0 failed, \\d+ skipped");
        }
    }

    /** check against a live Redis: progress, the table, status 0. */
    @Test
    void checkAgainstLiveRedis() throws Exception {
        try (Cli check = Cli.start(
                dir,
                "check",
                "--url",
                TestServers.redis(),
                "--tests",
                // The CLI's wiring, not Redis: lock-redis runs the whole kit (c01's fault load alone takes a minute
                // at time factor 3).
                "c01_mutualExclusion_severalClients|c0[3-5].*|c10.*|c13.*|c14.*",
                "--time-factor",
                "3")) {
            assertThat(check.await(Duration.ofSeconds(120))).as("%s", check).isZero();
            assertThat(check.out())
                    .contains("backend redis, declares")
                    .contains("using leaseMs=2000")
                    .contains("| contract | redis |")
                    .contains("| c01 Mutual exclusion | pass |")
                    // Redis declares DURABLE_FENCING; a deployment offers no store restart to prove it.
                    .contains("| c10 Fencing | unverified (needs fault RESTART_STORE")
                    .containsPattern("\\d+ passed, 0 failed, \\d+ skipped");
            assertThat(check.err()).contains("check [").contains("passed  c01_mutualExclusion");
        }
    }

    /** check where every selected test is skipped (Redis is not SESSION_BOUND): nothing was checked, status 1. */
    @Test
    void checkWhereEverythingIsSkippedIsNotASuccess() throws Exception {
        try (Cli check = Cli.start(dir, "check", "--url", TestServers.redis(), "--tests", "c09.*")) {
            assertThat(check.await(Duration.ofSeconds(60))).as("%s", check).isEqualTo(ExitStatus.CHECK_FAILED);
            assertThat(check.out())
                    .containsPattern("0 passed, 0 failed, [1-9]\\d* skipped")
                    .contains("Nothing was checked: every selected test was skipped");
        }
    }

    /** check reports an unreachable store in one line with status 69. */
    @Test
    void checkUnreachableStore() throws Exception {
        try (Cli check = Cli.start(dir, "check", "--url", "redis://127.0.0.1:1?connectTimeoutMs=500")) {
            assertThat(check.await(Duration.ofSeconds(60))).as("%s", check).isEqualTo(ExitStatus.STORE_UNAVAILABLE);
            assertThat(check.err().strip())
                    .startsWith("locksmith: lock store unavailable")
                    .doesNotContain("\n");
        }
    }
}
