package org.locksmith.lock.tck.reference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.locksmith.lock.tck.internal.TckResults;

/**
 * Feature gating and the report: a backend that declares almost nothing passes the undeclared sides (re-entry and
 * fencing fail clearly), every feature-gated test is skipped naming its feature, and the JSON result and the
 * semantics table say so.
 */
class ReportAndGatingTest {

    @TempDir
    Path reportDir;

    @Test
    void undeclaredFeaturesAreSkippedWithTheirNameAndTheirOtherSideIsChecked() throws Exception {
        Map<String, TestExecutionResult> results = new ConcurrentHashMap<>();
        Map<String, String> skipReasons = new ConcurrentHashMap<>();
        SummaryGeneratingListener summary = new SummaryGeneratingListener();
        var request = LauncherDiscoveryRequestBuilder.request()
                .selectors(selectClass(BrokenTcks.ReferenceMinimal.class))
                .filters(org.junit.platform.launcher.MethodFilter.includeMethodNamePatterns(
                        ".*c03_.*", ".*c07_.*", ".*c08_.*", ".*c10_.*", ".*c12_.*"))
                .configurationParameter("locksmith.tck.reportDir", reportDir.toString())
                .build();
        LauncherFactory.create().execute(request, summary, new TestExecutionListener() {
            @Override
            public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                id.getSource()
                        .filter(MethodSource.class::isInstance)
                        .map(s -> ((MethodSource) s).getMethodName())
                        .ifPresent(n -> results.put(n, result));
            }

            @Override
            public void executionSkipped(TestIdentifier id, String reason) {
                skipReasons.put(id.getDisplayName(), reason);
            }
        });
        assertThat(results.get("c03_reentrancy_undeclaredReentryFailsClearly").getStatus())
                .isEqualTo(TestExecutionResult.Status.SUCCESSFUL);
        assertThat(results.get("c10_fencing_undeclaredFencingTokenThrows").getStatus())
                .isEqualTo(TestExecutionResult.Status.SUCCESSFUL);
        for (String gated : List.of(
                "c03_reentrancy_holdCountsAndReleaseOrder",
                "c08_renewal_liveHolderKeepsLockPastLease",
                "c10_fencing_tokensRiseAcrossClients",
                "c12_fairness_arrivalOrder")) {
            TestExecutionResult r = results.get(gated);
            assertThat(r.getStatus()).as(gated).isEqualTo(TestExecutionResult.Status.ABORTED);
            assertThat(r.getThrowable().orElseThrow().getMessage()).as(gated).contains("not declared: ");
        }
        assertThat(summary.getSummary().getTotalFailureCount()).isZero();

        Path json;
        try (var files = Files.list(reportDir)) {
            json = files.filter(p -> p.getFileName().toString().startsWith("reference-memory-minimal--"))
                    .findFirst()
                    .orElseThrow();
        }
        TckResults.BackendRun run = TckResults.fromJson(Files.readString(json, StandardCharsets.UTF_8));
        assertThat(run.backend()).isEqualTo("reference-memory-minimal");
        assertThat(run.features()).containsExactly("BLOCKING_WAKEUP");
        Map<String, List<TckResults.TestResult>> byContract = TckResults.byContract(run.tests());
        assertThat(TckResults.verdict(byContract.get("c03")).status()).isEqualTo("pass");
        assertThat(TckResults.verdict(byContract.get("c12"))).isEqualTo(new TckResults.Verdict("not declared", "FAIR"));
        assertThat(TckResults.verdict(byContract.get("c08")).reason()).isEqualTo("AUTO_RENEWAL");
        assertThat(TckResults.verdict(byContract.get("c01")).status()).isEqualTo("not run");

        String table = Files.readString(reportDir.resolve(TckResults.TABLE), StandardCharsets.UTF_8);
        assertThat(table)
                .contains("| contract | reference-memory-minimal |")
                .contains("| c12 Fairness | not declared (FAIR) |")
                .contains("| c03 Reentrancy | pass |");
    }

    @Test
    void jsonRoundTripsEveryCharacter() {
        var run = new TckResults.BackendRun(
                "b\"\\\n\t\u0001é🔒",
                "x.Y",
                new java.util.TreeSet<>(List.of("FAIR")),
                1.5,
                "now",
                List.of(
                        new TckResults.TestResult("c01_a", "failed", "msg \"q\" \\ \n end", 12, Map.of("k \"", "v\n")),
                        new TckResults.TestResult("c02_b", "skipped", null, 0, Map.of())));
        assertThat(TckResults.fromJson(TckResults.toJson(run))).isEqualTo(run);
    }
}
