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
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.junit.jupiter.api.extension.TestWatcher;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.tck.internal.TckResults;

/**
 * Records every TCK test's outcome and, after the class, writes the backend's JSON result and regenerates the
 * markdown semantics table of every backend in the report directory; a failure whose message does not name its
 * contract and backend gets them in front. Registered by {@link LockTck}.
 */
final class TckReport
        implements BeforeEachCallback, AfterEachCallback, TestWatcher, AfterAllCallback, TestExecutionExceptionHandler {

    /** Configuration parameter / system property naming the report directory. */
    static final String REPORT_DIR_PROPERTY = "locksmith.tck.reportDir";

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(TckReport.class);

    /**
     * What one class run collects, per invocation of the class: a class runs once, a {@code @ParameterizedClass}
     * once per configuration, and each configuration gets its own report (the class's {@code afterAll} comes once,
     * after all of them).
     */
    private static final class Run {
        final Map<String, InvocationResults> byInvocation = new ConcurrentHashMap<>();
    }

    private static final class InvocationResults {
        final List<TckResults.TestResult> tests = Collections.synchronizedList(new ArrayList<>());
        volatile String backend;
        volatile Set<LockFeature> features;
    }

    /** The run of the test class, kept in its outermost context (the class, or the class template). */
    private static Run run(ExtensionContext context) {
        return outermost(context).getStore(NS).getOrComputeIfAbsent("run", k -> new Run(), Run.class);
    }

    /** The results of the invocation of the class that {@code context} (a test method's) belongs to. */
    private static InvocationResults invocation(ExtensionContext context) {
        ExtensionContext top = outermost(context);
        ExtensionContext below = context;
        while (below.getParent().isPresent() && below.getParent().get() != top) {
            below = below.getParent().get();
        }
        String id = below.getTestMethod().isPresent() ? top.getUniqueId() : below.getUniqueId();
        return run(context).byInvocation.computeIfAbsent(id, k -> new InvocationResults());
    }

    private static ExtensionContext outermost(ExtensionContext context) {
        Class<?> testClass = context.getRequiredTestClass();
        ExtensionContext c = context;
        while (c.getParent().isPresent()
                && c.getParent().get().getTestClass().filter(testClass::equals).isPresent()) {
            c = c.getParent().get();
        }
        return c;
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        context.getStore(NS).put("start", System.nanoTime());
    }

    @Override
    public void afterEach(ExtensionContext context) {
        Object instance = context.getTestInstance().orElse(null);
        if (instance instanceof LockTck tck) {
            if (tck.reportedBackend() != null) {
                InvocationResults results = invocation(context);
                results.backend = tck.reportedBackend();
                results.features = tck.reportedFeatures();
            }
            context.getStore(NS).put("notes", tck.reportedNotes());
        }
    }

    /**
     * An assertion that failed without the kit's "[contract | backend=...]" prefix (an AssertJ check that failed
     * before its description applied, an assertion in a hook) is thrown again with it, the original as its cause:
     * every failure names its rule and the backend.
     */
    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable thrown) throws Throwable {
        if (thrown instanceof AssertionError
                && context.getTestInstance().orElse(null) instanceof LockTck tck
                && tck.failurePrefix() != null
                && (thrown.getMessage() == null || !thrown.getMessage().contains(" | backend="))) {
            throw new AssertionError(tck.failurePrefix() + thrown.getMessage(), thrown);
        }
        throw thrown;
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
        invocation(context)
                .tests
                .add(new TckResults.TestResult(name, status, message, millis, notes == null ? Map.of() : notes));
    }

    @Override
    public void afterAll(ExtensionContext context) {
        String testClass = context.getRequiredTestClass().getName();
        Path dir = Path.of(context.getConfigurationParameter(REPORT_DIR_PROPERTY)
                .orElse(System.getProperty(REPORT_DIR_PROPERTY, "target/locksmith-tck")));
        for (InvocationResults results : run(context).byInvocation.values()) {
            String backend = results.backend != null
                    ? results.backend
                    : context.getRequiredTestClass().getSimpleName();
            Set<String> features = new TreeSet<>();
            if (results.features != null) {
                results.features.forEach(f -> features.add(f.name()));
            }
            List<TckResults.TestResult> tests;
            synchronized (results.tests) {
                tests = new ArrayList<>(results.tests);
            }
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
            } catch (Exception failure) {
                // A report that cannot be written must not hide the test results themselves.
                System.err.println("[locksmith-tck] could not write the TCK report to " + dir + ": " + failure);
            }
        }
    }
}
