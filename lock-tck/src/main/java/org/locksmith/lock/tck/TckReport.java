package org.locksmith.lock.tck;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.tck.internal.TckResults;

/**
 * Records every TCK test's outcome and, after the class, writes the backend's JSON result and regenerates the
 * markdown semantics table of every backend in the report directory. Registered by {@link LockTck}.
 */
final class TckReport implements BeforeEachCallback, AfterEachCallback, TestWatcher, AfterAllCallback {

    /** Configuration parameter / system property naming the report directory. */
    static final String REPORT_DIR_PROPERTY = "locksmith.tck.reportDir";

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(TckReport.class);

    /** What one class run collects. */
    private static final class Run {
        final List<TckResults.TestResult> tests = Collections.synchronizedList(new ArrayList<>());
        volatile String backend;
        volatile Set<LockFeature> features;
    }

    private static Run run(ExtensionContext context) {
        ExtensionContext c = context;
        while (c.getTestMethod().isPresent() && c.getParent().isPresent()) {
            c = c.getParent().get();
        }
        return c.getStore(NS).getOrComputeIfAbsent("run", k -> new Run(), Run.class);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        context.getStore(NS).put("start", System.nanoTime());
    }

    @Override
    public void afterEach(ExtensionContext context) {
        Object instance = context.getTestInstance().orElse(null);
        if (instance instanceof LockTck tck) {
            Run run = run(context);
            if (tck.reportedBackend() != null) {
                run.backend = tck.reportedBackend();
                run.features = tck.reportedFeatures();
            }
            context.getStore(NS).put("notes", tck.reportedNotes());
        }
    }

    @Override
    public void testSuccessful(ExtensionContext context) {
        record(context, "passed", null);
    }

    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
        record(context, "failed", String.valueOf(cause));
    }

    @Override
    public void testAborted(ExtensionContext context, Throwable cause) {
        String why = cause == null || cause.getMessage() == null ? "aborted" : cause.getMessage();
        // JUnit prefixes assumption messages; the reason itself is what the table shows.
        if (why.startsWith("Assumption failed: ")) {
            why = why.substring("Assumption failed: ".length());
        }
        record(context, "skipped", why);
    }

    @Override
    public void testDisabled(ExtensionContext context, Optional<String> reason) {
        record(context, "skipped", reason.orElse("disabled"));
    }

    @SuppressWarnings("unchecked")
    private void record(ExtensionContext context, String status, String message) {
        String name = context.getTestMethod().map(m -> m.getName()).orElse(context.getDisplayName());
        Long start = context.getStore(NS).get("start", Long.class);
        long millis = start == null ? 0 : (System.nanoTime() - start) / 1_000_000;
        Map<String, String> notes = context.getStore(NS).get("notes", Map.class);
        run(context)
                .tests
                .add(new TckResults.TestResult(name, status, message, millis, notes == null ? Map.of() : notes));
    }

    @Override
    public void afterAll(ExtensionContext context) {
        Run run = run(context);
        String testClass = context.getRequiredTestClass().getName();
        String backend = run.backend != null
                ? run.backend
                : context.getRequiredTestClass().getSimpleName();
        Set<String> features = new TreeSet<>();
        if (run.features != null) {
            run.features.forEach(f -> features.add(f.name()));
        }
        List<TckResults.TestResult> tests;
        synchronized (run.tests) {
            tests = new ArrayList<>(run.tests);
        }
        Path dir = Path.of(context.getConfigurationParameter(REPORT_DIR_PROPERTY)
                .orElse(System.getProperty(REPORT_DIR_PROPERTY, "target/locksmith-tck")));
        try {
            TckResults.write(
                    dir,
                    new TckResults.BackendRun(
                            backend,
                            testClass,
                            features,
                            TckTimings.slackFactor(),
                            Instant.now().toString(),
                            tests));
        } catch (Exception e) {
            // A report that cannot be written must not hide the test results themselves.
            System.err.println("[locksmith-tck] could not write the TCK report to " + dir + ": " + e);
        }
    }
}
