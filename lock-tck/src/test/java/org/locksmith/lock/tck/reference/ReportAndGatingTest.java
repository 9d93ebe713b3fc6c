package org.locksmith.lock.tck.reference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
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
 * semantics table say "not declared" for those contracts, never "pass"; a failure still shows FAIL.
 */
class ReportAndGatingTest {

    @TempDir
    Path reportDir;

    @Test
    void aParameterizedTckClassWritesOneReportPerConfiguration() throws Exception {
        SummaryGeneratingListener summary = new SummaryGeneratingListener();
        var request = LauncherDiscoveryRequestBuilder.request()
                .selectors(selectClass(BrokenTcks.ParameterizedReference.class))
                .filters(org.junit.platform.launcher.MethodFilter.includeMethodNamePatterns(
                        ".*c02_progress_freeKeyGrantedInOneAttempt.*", ".*c03_.*"))
                .configurationParameter("locksmith.tck.reportDir", reportDir.toString())
                .build();
        LauncherFactory.create().execute(request, summary);
        assertThat(summary.getSummary().getTestsSucceededCount()).isEqualTo(4);
        for (String configuration : List.of("one", "two")) {
            String backend = "reference-memory-param-" + configuration;
            List<Path> reports;
            try (var files = Files.list(reportDir)) {
                reports = files.filter(p -> p.getFileName().toString().startsWith(backend + "--"))
                        .toList();
            }
            assertThat(reports)
                    .as("the reports of configuration " + configuration)
                    .hasSize(1);
            Path json = reports.get(0);
            TckResults.BackendRun run = TckResults.fromJson(Files.readString(json, StandardCharsets.UTF_8));
            assertThat(run.backend()).isEqualTo(backend);
            assertThat(run.tests())
                    .extracting(TckResults.TestResult::status)
                    .as(backend + "'s tests (c02's free key and c03's two; the undeclared side skipped)")
                    .containsExactlyInAnyOrder("passed", "passed", "skipped");
        }
    }

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
        // Only the undeclared sides of c03 and c10 ran (and passed): that is not a pass of the contract.
        assertThat(TckResults.verdict("c03", byContract.get("c03"), run.features()))
                .isEqualTo(new TckResults.Verdict("not declared", "REENTRANT", TckResults.UNDECLARED_SIDE_CHECKED));
        assertThat(TckResults.verdict("c10", byContract.get("c10"), run.features()))
                .isEqualTo(new TckResults.Verdict("not declared", "FENCING", TckResults.UNDECLARED_SIDE_CHECKED));
        assertThat(TckResults.verdict("c12", byContract.get("c12"), run.features()))
                .isEqualTo(new TckResults.Verdict("not declared", "FAIR", ""));
        assertThat(TckResults.verdict("c08", byContract.get("c08"), run.features()))
                .isEqualTo(new TckResults.Verdict("not declared", "AUTO_RENEWAL", ""));
        assertThat(TckResults.verdict("c07", byContract.get("c07"), run.features()))
                .isEqualTo(new TckResults.Verdict("not declared", "LEASE_EXPIRY", ""));
        assertThat(TckResults.verdict("c01", byContract.get("c01"), run.features())
                        .status())
                .isEqualTo("not run");

        String table = Files.readString(reportDir.resolve(TckResults.TABLE), StandardCharsets.UTF_8);
        assertThat(table)
                .contains("| contract | reference-memory-minimal |")
                .contains("| c03 Reentrancy | not declared (REENTRANT); undeclared side checked |")
                .contains("| c07 Lease expiry | not declared (LEASE_EXPIRY) |")
                .contains("| c08 Renewal | not declared (AUTO_RENEWAL) |")
                .contains("| c10 Fencing | not declared (FENCING); undeclared side checked |")
                .contains("| c12 Fairness | not declared (FAIR) |")
                .doesNotContain("| pass |");
        String written = Files.readString(json, StandardCharsets.UTF_8);
        assertThat(written)
                .contains("{\"id\": \"c10\", \"name\": \"Fencing\", \"status\": \"not declared\", "
                        + "\"reason\": \"FENCING\", \"detail\": \"undeclared side checked\"}");
    }

    private static TckResults.TestResult passed(String name) {
        return new TckResults.TestResult(name, "passed", null, 1, Map.of());
    }

    private static TckResults.TestResult skipped(String name, String why) {
        return new TckResults.TestResult(name, "skipped", why, 0, Map.of());
    }

    private static TckResults.TestResult failed(String name) {
        return new TckResults.TestResult(name, "failed", "java.lang.AssertionError: [" + name + "] broke", 1, Map.of());
    }

    @Test
    void aFailureShowsFailEvenWhereTheFeatureIsNotDeclared() {
        List<TckResults.TestResult> c10 = List.of(
                skipped("c10_fencing_tokensRiseAcrossClients", "not declared: FENCING"),
                failed("c10_fencing_undeclaredFencingTokenThrows"));
        assertThat(TckResults.verdict("c10", c10, Set.of("BLOCKING_WAKEUP")).status())
                .isEqualTo("fail");
        String table = TckResults.table(List.of(
                new TckResults.BackendRun("b", "x.Y", new TreeSet<>(Set.of("BLOCKING_WAKEUP")), 1.0, "now", c10)));
        assertThat(table).contains("| c10 Fencing | **FAIL** |");
    }

    @Test
    void anUndeclaredSubFeatureDoesNotHideADeclaredContractsPass() {
        // LOSS_DETECTION declared, SESSION_BOUND not: c11's session-bound test is skipped, the others passed.
        List<TckResults.TestResult> c11 = List.of(
                skipped("c11_lossDetection_sessionKilled", "not declared: SESSION_BOUND"),
                passed("c11_lossDetection_sessionKilledWithoutSessionBinding"),
                passed("c11_lossDetection_stateDeleted"));
        assertThat(TckResults.verdict("c11", c11, Set.of("LOSS_DETECTION", "LEASE_EXPIRY")))
                .isEqualTo(new TckResults.Verdict("pass", "", ""));
        List<TckResults.TestResult> c10 = List.of(
                passed("c10_fencing_tokensRiseAcrossClients"),
                skipped(
                        "c10_fencing_undeclaredFencingTokenThrows",
                        "declared: FENCING (this test checks the side without it)"),
                skipped("c10_fencing_tokensRiseAcrossStoreRestart", "not declared: DURABLE_FENCING"));
        assertThat(TckResults.verdict("c10", c10, Set.of("FENCING")).status()).isEqualTo("pass");
    }

    @Test
    void aTestSkippedForAMissingHookLeavesTheContractUnverifiedNotPassed() {
        List<TckResults.TestResult> c01 = List.of(
                passed("c01_mutualExclusion_severalClients"),
                skipped(
                        "c01_mutualExclusion_killedWorkerHolder",
                        "needs workerUrl() for worker processes (it is empty)"));
        assertThat(TckResults.verdict("c01", c01, Set.of()))
                .isEqualTo(new TckResults.Verdict(
                        "unverified", "needs workerUrl() for worker processes (it is empty)", ""));
        String table = TckResults.table(
                List.of(new TckResults.BackendRun("b", "x.Y", new TreeSet<>(Set.of()), 1.0, "now", c01)));
        assertThat(table)
                .contains(
                        "| c01 Mutual exclusion | unverified (needs workerUrl() for worker processes (it is empty)) |");
        List<TckResults.TestResult> c10 = List.of(
                passed("c10_fencing_tokensRiseAcrossClients"),
                skipped(
                        "c10_fencing_tokensRiseAcrossStoreRestart",
                        "needs fault RESTART_STORE (faults() does not offer it)"));
        assertThat(TckResults.verdict("c10", c10, Set.of("FENCING", "DURABLE_FENCING"))
                        .status())
                .isEqualTo("unverified");
    }

    @Test
    void ungatedContractsAreUnaffected() {
        List<TckResults.TestResult> c01 = List.of(
                passed("c01_mutualExclusion_severalClients"),
                skipped(
                        "c01_mutualExclusion_pausedHolderNeverValidWhileAnotherHolds",
                        "the backend declares neither LEASE_EXPIRY nor SESSION_BOUND: nothing frees the key"));
        assertThat(TckResults.verdict("c01", c01, Set.of()).status()).isEqualTo("pass");
        List<TckResults.TestResult> c15 = List.of(skipped(
                "c15_unavailableStore_failsWithinTimeoutAndRecovers",
                "needs fault STORE_OUTAGE (faults() does not offer it)"));
        assertThat(TckResults.verdict("c15", c15, Set.of("FENCING")))
                .isEqualTo(new TckResults.Verdict(
                        "unverified", "needs fault STORE_OUTAGE (faults() does not offer it)", ""));
    }

    @Test
    void withoutRecordedFeaturesTheSkipReasonsTell() {
        List<TckResults.TestResult> c12 = List.of(skipped("c12_fairness_arrivalOrder", "not declared: FAIR"));
        assertThat(TckResults.verdict("c12", c12, Set.of()))
                .isEqualTo(new TckResults.Verdict("not declared", "FAIR", ""));
    }

    @Test
    void jsonRoundTripsEveryCharacter() {
        var run = new TckResults.BackendRun(
                "b\"\\\n\t\u0001é🔒",
                "x.Y",
                new TreeSet<>(List.of("FAIR")),
                1.5,
                "now",
                List.of(
                        new TckResults.TestResult("c01_a", "failed", "msg \"q\" \\ \n end", 12, Map.of("k \"", "v\n")),
                        new TckResults.TestResult("c02_b", "skipped", null, 0, Map.of())));
        assertThat(TckResults.fromJson(TckResults.toJson(run))).isEqualTo(run);
    }

    /** A kit class with one more test, whose failure carries none of the kit's prefix. */
    static class BareFailure extends MemoryTck {
        @Override
        String name() {
            return "reference-memory-bare-failure";
        }

        @Test
        public void c03_reentrancy_bareFailure() {
            org.junit.jupiter.api.Assertions.fail("a check without the kit's prefix");
        }
    }

    @Test
    void aFailureWithoutTheKitsPrefixGetsItsContractAndBackend() {
        Map<String, Throwable> failures = new ConcurrentHashMap<>();
        var request = LauncherDiscoveryRequestBuilder.request()
                .selectors(selectClass(BareFailure.class))
                .filters(org.junit.platform.launcher.MethodFilter.includeMethodNamePatterns(".*bareFailure.*"))
                .configurationParameter("locksmith.tck.reportDir", reportDir.toString())
                .build();
        LauncherFactory.create().execute(request, new TestExecutionListener() {
            @Override
            public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                if (id.isTest()) {
                    result.getThrowable().ifPresent(t -> failures.put(id.getDisplayName(), t));
                }
            }
        });
        assertThat(failures).hasSize(1);
        Throwable failure = failures.values().iterator().next();
        assertThat(failure.getMessage())
                .startsWith("[c03 ")
                .contains(" | backend=")
                .endsWith("a check without the kit's prefix");
        assertThat(failure.getCause()).hasMessage("a check without the kit's prefix");
    }
}
