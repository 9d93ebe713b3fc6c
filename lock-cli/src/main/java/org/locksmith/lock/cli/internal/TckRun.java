package org.locksmith.lock.cli.internal;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import org.junit.platform.engine.FilterResult;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.PostDiscoveryFilter;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * Runs the TCK ({@link UrlTck}) against one lock URL through the JUnit Platform Launcher, with a progress bar, and
 * leaves the TCK's JSON result and {@code semantics.md} in a report directory (several runs into one directory
 * land side by side in one table).
 */
public final class TckRun {

    /** One test's outcome. */
    public record Outcome(String test, String status, String message, long millis) {}

    private final String url;
    private final Path reportDir;
    private final Pattern tests;
    private final Map<String, String> timings = new LinkedHashMap<>();

    /**
     * @param url the lock URL, with its short test times already set
     * @param reportDir where the TCK writes its results and table
     * @param tests which TCK test methods to run (matched against the method name)
     */
    public TckRun(String url, Path reportDir, Pattern tests) {
        this.url = url;
        this.reportDir = reportDir;
        this.tests = tests;
    }

    /** The times the URL configures, for the TCK's allowances (absent ones keep the TCK's defaults). */
    public TckRun timings(Optional<Duration> lease, Optional<Duration> session, Optional<Duration> operation) {
        lease.ifPresent(d -> timings.put(UrlTck.LEASE_MS, Long.toString(d.toMillis())));
        session.ifPresent(d -> timings.put(UrlTck.SESSION_MS, Long.toString(d.toMillis())));
        operation.ifPresent(d -> timings.put(UrlTck.OPERATION_MS, Long.toString(d.toMillis())));
        return this;
    }

    /** Runs the selected tests, drawing progress on {@code progressOut}, and returns every test's outcome. */
    public List<Outcome> execute(PrintWriter progressOut, String label) {
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                .selectors(selectClass(UrlTck.class))
                .filters((PostDiscoveryFilter) descriptor -> descriptor
                        .getSource()
                        .filter(MethodSource.class::isInstance)
                        .map(s -> FilterResult.includedIf(tests.matcher(((MethodSource) s).getMethodName())
                                .matches()))
                        .orElse(FilterResult.included("container")))
                .configurationParameter(UrlTck.URL, url)
                .configurationParameter("locksmith.tck.reportDir", reportDir.toString())
                // the kit's tests marked @Execution(CONCURRENT) overlap; every other test still runs alone
                .configurationParameter("junit.jupiter.execution.parallel.enabled", "true")
                .configurationParameter("junit.jupiter.execution.parallel.config.strategy", "fixed")
                .configurationParameter("junit.jupiter.execution.parallel.config.fixed.parallelism", "4")
                .configurationParameter("junit.jupiter.execution.parallel.config.fixed.max-pool-size", "4")
                .configurationParameters(timings)
                .build();
        List<Outcome> outcomes = Collections.synchronizedList(new ArrayList<>());
        Progress progress = new Progress(progressOut, label);
        Launcher launcher = LauncherFactory.create();
        launcher.execute(request, new TestExecutionListener() {
            private final Map<String, Long> starts = new java.util.concurrent.ConcurrentHashMap<>();

            @Override
            public void testPlanExecutionStarted(TestPlan plan) {
                progress.start(plan.countTestIdentifiers(TestIdentifier::isTest));
            }

            @Override
            public void executionStarted(TestIdentifier id) {
                if (id.isTest()) {
                    starts.put(id.getUniqueId(), System.nanoTime());
                    progress.running(name(id));
                }
            }

            @Override
            public void executionSkipped(TestIdentifier id, String reason) {
                if (id.isTest()) {
                    record(new Outcome(name(id), "skipped", reason, 0));
                }
            }

            @Override
            public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                if (!id.isTest()) {
                    return;
                }
                Long start = starts.remove(id.getUniqueId());
                long ms = start == null ? 0 : (System.nanoTime() - start) / 1_000_000;
                String message = result.getThrowable()
                        .map(t -> t.getMessage() == null ? t.toString() : t.getMessage())
                        .orElse(null);
                String status = switch (result.getStatus()) {
                    case SUCCESSFUL -> "passed";
                    case ABORTED -> "skipped";
                    case FAILED -> "failed";
                };
                record(new Outcome(name(id), status, message, ms));
            }

            private void record(Outcome o) {
                outcomes.add(o);
                progress.finished(o);
            }
        });
        progress.end();
        synchronized (outcomes) {
            return List.copyOf(outcomes);
        }
    }

    /** The semantics table the TCK wrote into the report directory: from its header row to its last row. */
    public static String table(Path reportDir) throws IOException {
        String md = Files.readString(reportDir.resolve("semantics.md"), StandardCharsets.UTF_8);
        int start = md.indexOf("| contract |");
        int end = md.indexOf("\n## ", Math.max(start, 0));
        return md.substring(Math.max(start, 0), end < 0 ? md.length() : end).strip();
    }

    /** The TCK's measurements section (hand-off latencies and such), empty if none. */
    public static String measurements(Path reportDir) throws IOException {
        String md = Files.readString(reportDir.resolve("semantics.md"), StandardCharsets.UTF_8);
        int start = md.indexOf("## Measurements");
        if (start < 0) {
            return "";
        }
        int end = md.indexOf("\n## ", start + 3);
        return md.substring(start + "## Measurements".length(), end < 0 ? md.length() : end)
                .strip();
    }

    private static String name(TestIdentifier id) {
        return id.getSource()
                .filter(MethodSource.class::isInstance)
                .map(s -> ((MethodSource) s).getMethodName())
                .orElse(id.getDisplayName());
    }
}
