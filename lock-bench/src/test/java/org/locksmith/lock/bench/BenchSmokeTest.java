package org.locksmith.lock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The benchmark in seconds: every scenario of every contender runs briefly against the real stores (the machine's
 * Redis, MySQL and PostgreSQL, found as the tests find them, and the in-process ZooKeeper), so that the harness, the peers'
 * wiring, the report and the charts cannot rot. It measures nothing worth publishing, but its exact checks hold at
 * any speed: S3's counter proves mutual exclusion, S5 proves that re-entry costs Locksmith no store command.
 */
class BenchSmokeTest {

    @Test
    void everyScenarioOfEveryContenderRunsAndTheReportIsWritten(@TempDir Path out) throws Exception {
        Results r = BenchMain.run(BenchPlan.smoke(), Contenders.all(), EnumSet.allOf(Scenario.class), out);

        for (Contender c : Contenders.all()) {
            for (Scenario s : Scenario.values()) {
                boolean ran = switch (s) {
                    case S1 -> r.uncontended(c.name()).isPresent();
                    case S2 -> r.parallel(c.name()).isPresent();
                    case S3 -> r.contended(c.name()).isPresent();
                    case S4 -> r.handoff(c.name()).isPresent();
                    case S5 -> r.reentry(c.name()).isPresent();
                    case S6 -> r.manyLeases(c.name()).isPresent();
                };
                assertThat(ran || r.notApplicable(c.name(), s).isPresent())
                        .as(s + " of " + c.name() + " produced neither a result nor a reason")
                        .isTrue();
            }
        }
        assertThat(r.floors)
                .hasSize(5)
                .allSatisfy(f -> assertThat(f.p50Micros()).isPositive());
        for (Results.Contended c : r.contended) {
            assertThat(c.grants()).as("S3 grants of " + c.contender()).isPositive();
        }
        for (Results.Handoff h : r.handoff) {
            assertThat(h.handoffs()).as("S4 hand-offs of " + h.contender()).isPositive();
        }
        for (Contender c : Contenders.all()) {
            if (c.ours() && !StoreCommands.counted(c.store())) {
                Results.Reentry e = r.reentry(c.name()).orElseThrow();
                assertThat(new double[] {e.acquireCommands(), e.releaseCommands(), e.pairCommands()})
                        .as("S5: " + c.name() + "'s store has no exact counter, so nothing may be reported as counted")
                        .containsOnly(Double.NaN);
            } else if (c.ours()) {
                Results.Reentry e = r.reentry(c.name()).orElseThrow();
                assertThat(new double[] {e.acquireCommands(), e.releaseCommands()})
                        .as("S5: a re-entrant acquire or release of " + c.name() + " reached the store")
                        .containsExactly(0, 0);
                assertThat(e.pairCommands())
                        .as("S5: an uncontended acquire + release of " + c.name() + " costs store commands")
                        .isGreaterThanOrEqualTo(2);
                assertThat(Double.isNaN(e.pairLogFsyncs()))
                        .as("S5: fsyncs are counted exactly for MySQL, " + c.name())
                        .isEqualTo(c.store() != StoreKind.MYSQL);
            }
        }

        String md = Files.readString(out.resolve("benchmarks.md"), StandardCharsets.UTF_8);
        for (Scenario s : Scenario.values()) {
            assertThat(md).contains("## " + s.name() + " ");
        }
        for (Contender c : Contenders.all()) {
            assertThat(md).contains(c.name());
        }
        assertThat(md).contains("## Targets").doesNotContain("not measured");
        for (String postgres : new String[] {"locksmith-postgres", "spring-jdbc-postgres", "shedlock-jdbc"}) {
            assertThat(r.uncontended(postgres)).as("S1 of " + postgres).isPresent();
            assertThat(r.handoff(postgres)).as("S4 of " + postgres).isPresent();
        }
        assertThat(md)
                .contains("PostgreSQL 1", "PostgreSQL JDBC driver 4", "ShedLock 7")
                .doesNotContain(" null ");
        for (String chart : new String[] {Charts.S1, Charts.S3, Charts.S4}) {
            assertThat(out.resolve(chart)).isNotEmptyFile();
            assertThat(Files.readAllBytes(out.resolve(chart)))
                    .startsWith((byte) 0x89, (byte) 'P', (byte) 'N', (byte) 'G');
        }
    }

    @Test
    void theReadmeShowsTheCommandThatWritesThePublishedReport() throws Exception {
        Path readme = Path.of("..", "README.md"); // tests run in the module's directory
        assertThat(Files.readString(readme, StandardCharsets.UTF_8)).contains(Report.COMMAND);
    }
}
