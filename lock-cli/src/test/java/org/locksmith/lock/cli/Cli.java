package org.locksmith.lock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;

/**
 * {@code locksmith} in its own JVM, as a user runs it, so that exit statuses and signals are real: {@code java -cp
 * <the test class path> org.locksmith.lock.cli.Main ...}, with stdout and stderr captured to files.
 */
final class Cli implements AutoCloseable {
    final Process process;
    private final Path out;
    private final Path err;

    private Cli(Process process, Path out, Path err) {
        this.process = process;
        this.out = out;
        this.err = err;
    }

    /** The test class path: Surefire runs tests from a manifest-only jar and publishes the real one here. */
    static String classPath() {
        String cp = System.getProperty("surefire.test.class.path");
        return cp == null || cp.isBlank() ? System.getProperty("java.class.path") : cp;
    }

    /**
     * The prefix that starts a process with default signal dispositions. A build launched from a background shell
     * inherits SIGINT as ignored, and a JVM started so never installs its SIGINT handler, so the tests that signal
     * {@code locksmith} would see it ignore SIGINT, as POSIX has a background job do. GNU env (coreutils 8.31+)
     * resets that; without it the tests run as they are (and pass in the foreground).
     */
    private static final List<String> DEFAULT_SIGNALS = defaultSignals();

    private static List<String> defaultSignals() {
        try {
            Process probe = new ProcessBuilder("env", "--default-signal=INT,TERM", "true")
                    .redirectErrorStream(true)
                    .start();
            probe.getInputStream().readAllBytes();
            return probe.waitFor() == 0 ? List.of("env", "--default-signal=INT,TERM") : List.of();
        } catch (IOException e) {
            return List.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of();
        }
    }

    /** {@code command} behind the prefix that gives it default signal dispositions (empty where env lacks it). */
    static List<String> withDefaultSignals(String... command) {
        List<String> cmd = new ArrayList<>(DEFAULT_SIGNALS);
        cmd.addAll(List.of(command));
        return cmd;
    }

    static Cli start(Path dir, Map<String, String> env, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(DEFAULT_SIGNALS);
        cmd.addAll(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m",
                "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC",
                "-cp",
                classPath(),
                Main.class.getName()));
        cmd.addAll(List.of(args));
        Path o = Files.createTempFile(dir, "cli-", ".out");
        Path e = Files.createTempFile(dir, "cli-", ".err");
        ProcessBuilder pb = new ProcessBuilder(cmd)
                .redirectOutput(o.toFile())
                .redirectError(e.toFile())
                .redirectInput(ProcessBuilder.Redirect.PIPE);
        pb.environment().remove("LOCKSMITH_URL");
        pb.environment().putAll(env);
        Process p = pb.start();
        return new Cli(p, o, e);
    }

    static Cli start(Path dir, String... args) throws IOException {
        return start(dir, Map.of(), args);
    }

    /**
     * {@code locksmith run --verbose --url URL --key KEY --wait 2m -- touch RAN}, once it says it waits for the
     * lock (someone else holds it).
     */
    static Cli startWaiting(Path dir, String url, String key, Path ran) throws Exception {
        Cli cli = start(
                dir, "run", "--verbose", "--url", url, "--key", key, "--wait", "2m", "--", "touch", ran.toString());
        try {
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> cli.err().contains("waiting up to 2m") || !cli.process.isAlive());
            assertThat(cli.err()).as("%s", cli).contains("waiting up to 2m");
            return cli;
        } catch (AssertionError | RuntimeException e) {
            cli.close();
            throw e;
        }
    }

    /** Runs to the end (at most {@code limit}) and returns the exit status. */
    static Cli run(Path dir, Duration limit, String... args) throws Exception {
        Cli c = start(dir, args);
        c.await(limit);
        return c;
    }

    /** Waits for the end; fails (and kills the process) if it takes longer than {@code limit}. */
    int await(Duration limit) throws InterruptedException {
        if (!process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            throw new AssertionError(
                    "locksmith did not end within " + limit + "; stdout: " + out() + " stderr: " + err());
        }
        return process.exitValue();
    }

    int status() {
        return process.exitValue();
    }

    String out() {
        return read(out);
    }

    String err() {
        return read(err);
    }

    private static String read(Path p) {
        try {
            return Files.readString(p, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    @Override
    public String toString() {
        return "locksmith pid " + process.pid() + " (stdout: " + out() + " | stderr: " + err() + ")";
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }
}
