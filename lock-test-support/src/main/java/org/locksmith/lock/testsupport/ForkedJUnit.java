package org.locksmith.lock.testsupport;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * Runs one JUnit test class in a separate JVM, possibly of another Java version than the build's: the way this
 * repository runs a backend's TCK with the client used from virtual threads (Java 21+) while the build itself runs
 * on Java 17. The child JVM gets this JVM's test class path and the given system properties, runs the class through
 * the JUnit Platform launcher ({@link #main}), prints one line per test and a summary, and exits 0 only if at least
 * one test passed and none failed. Bounded: the child is killed at the timeout.
 */
public final class ForkedJUnit {
    private static final String SUMMARY = "forked-junit summary:";
    private static final Pattern SUMMARY_LINE = Pattern.compile(
            Pattern.quote(SUMMARY) + " found=(\\d+) succeeded=(\\d+) failed=(\\d+) aborted=(\\d+) skipped=(\\d+)");

    private ForkedJUnit() {}

    /** A JDK on this machine: its {@code java} launcher and feature version. */
    public record Jdk(Path java, int feature) {}

    /** What a child run reported. */
    public record Result(int exitCode, int found, int succeeded, int failed, int aborted, String output) {
        /** The child's output, last {@code lines} lines. */
        public String tail(int lines) {
            String[] all = output.split("\n");
            return String.join("\n", List.of(all).subList(Math.max(0, all.length - lines), all.length));
        }
    }

    /**
     * The newest JDK of at least {@code minimumFeature} on this machine: the one {@code LOCKSMITH_TEST_JAVA} names
     * (a {@code java} binary or a JDK home) if set, else the newest among this JVM and the JDKs installed beside it
     * (the directory that holds this JVM's home, {@code /usr/lib/jvm}, {@code /opt/java}, {@code /usr/java},
     * {@code ~/.jdks}, {@code ~/.sdkman/candidates/java}).
     */
    public static Optional<Jdk> newestJdk(int minimumFeature) {
        String named = System.getenv("LOCKSMITH_TEST_JAVA");
        if (named != null && !named.isBlank()) {
            Path p = Path.of(named);
            Path home = Files.isDirectory(p) ? p : p.getParent().getParent();
            Jdk jdk = describe(home)
                    .orElseThrow(() -> new IllegalStateException(
                            "LOCKSMITH_TEST_JAVA=" + named + " is neither a JDK home nor its bin/java"));
            if (jdk.feature() < minimumFeature) {
                throw new IllegalStateException("LOCKSMITH_TEST_JAVA=" + named + " is Java " + jdk.feature()
                        + "; this test needs Java " + minimumFeature + " or later");
            }
            return Optional.of(jdk);
        }
        List<Jdk> found = new ArrayList<>();
        Path self = Path.of(System.getProperty("java.home"));
        found.add(new Jdk(self.resolve("bin").resolve("java"), Runtime.version().feature()));
        List<Path> places = new ArrayList<>();
        if (self.getParent() != null) {
            places.add(self.getParent());
        }
        String user = System.getProperty("user.home");
        places.addAll(List.of(
                Path.of("/usr/lib/jvm"),
                Path.of("/opt/java"),
                Path.of("/usr/java"),
                Path.of(user, ".jdks"),
                Path.of(user, ".sdkman", "candidates", "java")));
        for (Path place : places) {
            if (!Files.isDirectory(place)) {
                continue;
            }
            try (Stream<Path> homes = Files.list(place)) {
                homes.map(ForkedJUnit::describe).flatMap(Optional::stream).forEach(found::add);
            } catch (IOException ignored) {
                // an unreadable directory holds no JDK we can use
            }
        }
        return found.stream().filter(j -> j.feature() >= minimumFeature).max(Comparator.comparingInt(Jdk::feature));
    }

    /** A JDK home's {@code bin/java} and the feature version its {@code release} file states. */
    private static Optional<Jdk> describe(Path home) {
        Path java = home.resolve("bin").resolve("java");
        Path release = home.resolve("release");
        if (!Files.isExecutable(java) || !Files.isRegularFile(release)) {
            return Optional.empty();
        }
        try {
            for (String line : Files.readAllLines(release, StandardCharsets.UTF_8)) {
                Matcher m = Pattern.compile("^JAVA_VERSION=\"(1\\.)?(\\d+)").matcher(line);
                if (m.find()) {
                    return Optional.of(new Jdk(java, Integer.parseInt(m.group(2))));
                }
            }
        } catch (IOException | RuntimeException ignored) {
            // not a JDK we can describe
        }
        return Optional.empty();
    }

    /**
     * Runs {@code testClass} in a child JVM started with {@code java}, this JVM's test class path and {@code
     * properties}; its output goes to {@code log} (and is returned). Kills the child after {@code timeout}.
     */
    public static Result run(Path java, Class<?> testClass, Map<String, String> properties, Duration timeout, Path log)
            throws IOException, InterruptedException {
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command = new ArrayList<>();
        command.add(java.toString());
        command.add("-Xmx512m");
        properties.forEach((k, v) -> command.add("-D" + k + "=" + v));
        command.add("-cp");
        command.add(cp);
        command.add(ForkedJUnit.class.getName());
        command.add(testClass.getName());
        Files.createDirectories(log.toAbsolutePath().getParent());
        Process child = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        int exit;
        if (child.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            exit = child.exitValue();
        } else {
            child.descendants().forEach(ProcessHandle::destroyForcibly);
            child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            exit = -1;
            Files.writeString(log, "\nforked-junit: killed after " + timeout + "\n", StandardOpenOption.APPEND);
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        Matcher m = SUMMARY_LINE.matcher(output);
        if (!m.find()) {
            return new Result(exit, 0, 0, 0, 0, output);
        }
        return new Result(
                exit,
                Integer.parseInt(m.group(1)),
                Integer.parseInt(m.group(2)),
                Integer.parseInt(m.group(3)),
                Integer.parseInt(m.group(4)),
                output);
    }

    /**
     * Runs a backend's TCK class with the client used from virtual threads ({@code locksmith.tck.threads=virtual})
     * on the newest JDK of the machine, in a JVM of its own, and fails with the child's output unless every test
     * passed or was skipped. The child gets every {@code locksmith.*} system property of this JVM. With no Java 21+
     * on the machine it runs the TCK on platform threads in a JVM like this one, then aborts the calling test,
     * saying that virtual threads were not checked and how to point it at a newer JDK.
     */
    public static void runTckOnVirtualThreads(Class<?> tck, Duration timeout) throws IOException, InterruptedException {
        Optional<Jdk> newest = newestJdk(21);
        Map<String, String> properties = new java.util.TreeMap<>();
        System.getProperties().stringPropertyNames().stream()
                .filter(k -> k.startsWith("locksmith."))
                .forEach(k -> properties.put(k, System.getProperty(k)));
        properties.put("locksmith.tck.threads", newest.isPresent() ? "virtual" : "platform");
        Path java = newest.map(Jdk::java).orElse(Path.of(System.getProperty("java.home"), "bin", "java"));
        Path log = Path.of(
                "target", "forked-junit", tck.getSimpleName() + "-" + properties.get("locksmith.tck.threads") + ".log");
        long start = System.nanoTime();
        Result r = run(java, tck, properties, timeout, log);
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
        String what = tck.getSimpleName() + " on " + properties.get("locksmith.tck.threads") + " threads, " + java;
        System.out.println("forked " + what + ": exit " + r.exitCode() + ", " + r.found() + " tests, " + r.succeeded()
                + " passed, " + r.failed() + " failed, " + r.aborted() + " skipped, " + seconds + " s; log " + log);
        org.junit.jupiter.api.Assertions.assertTrue(
                r.exitCode() == 0 && r.failed() == 0 && r.succeeded() > 0,
                () -> what + " failed (exit " + r.exitCode() + ", " + r.failed() + " failed; full log " + log + "):\n"
                        + r.tail(120));
        org.junit.jupiter.api.Assumptions.assumeTrue(
                newest.isPresent(),
                "virtual threads not checked: no Java 21+ found on this machine (the TCK passed on platform threads);"
                        + " install one or set LOCKSMITH_TEST_JAVA to its home");
    }

    /** The child: runs the class named by {@code args[0]}, prints each test's outcome and a summary line. */
    public static void main(String[] args) {
        PrintWriter out = new PrintWriter(new java.io.OutputStreamWriter(System.out, StandardCharsets.UTF_8), true);
        out.println("forked-junit: " + args[0] + " on Java " + Runtime.version());
        SummaryGeneratingListener summary = new SummaryGeneratingListener();
        Map<String, Long> started = new java.util.concurrent.ConcurrentHashMap<>();
        TestExecutionListener progress = new TestExecutionListener() {
            @Override
            public void executionStarted(TestIdentifier test) {
                started.put(test.getUniqueId(), System.nanoTime());
            }

            @Override
            public void executionFinished(TestIdentifier test, TestExecutionResult result) {
                Long start = started.remove(test.getUniqueId());
                String took = start == null ? "" : " in " + (System.nanoTime() - start) / 1_000_000 + " ms";
                if (test.isTest()) {
                    out.println("forked-junit: " + test.getDisplayName() + " " + result.getStatus() + took
                            + result.getThrowable().map(t -> ": " + t).orElse(""));
                } else if (test.getSource().isPresent()) {
                    out.println("forked-junit: " + test.getDisplayName() + " finished" + took);
                }
            }

            @Override
            public void executionSkipped(TestIdentifier test, String reason) {
                out.println("forked-junit: " + test.getDisplayName() + " SKIPPED: " + reason);
            }
        };
        Launcher launcher = LauncherFactory.create();
        launcher.execute(
                LauncherDiscoveryRequestBuilder.request()
                        .selectors(DiscoverySelectors.selectClass(args[0]))
                        .build(),
                summary,
                progress);
        TestExecutionSummary s = summary.getSummary();
        s.printFailuresTo(out, 40);
        out.println(SUMMARY + " found=" + s.getTestsFoundCount() + " succeeded=" + s.getTestsSucceededCount()
                + " failed=" + s.getTotalFailureCount() + " aborted=" + s.getTestsAbortedCount() + " skipped="
                + s.getTestsSkippedCount());
        out.flush();
        System.exit(s.getTotalFailureCount() == 0 && s.getTestsSucceededCount() > 0 ? 0 : 1);
    }
}
