package org.locksmith.lock.tck.internal;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.locksmith.lock.tck.TckTimings;

/**
 * A {@link TckWorker} in its own JVM, started with this JVM's java binary and class path. Always bounded: the
 * worker ends itself after its lifetime, and {@link #close()} kills it.
 */
public final class WorkerProcess implements AutoCloseable {
    private final Process process;
    private final Path stderr;
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final String description;

    private WorkerProcess(Process process, Path stderr, String description) {
        this.process = process;
        this.stderr = stderr;
        this.description = description;
        Thread reader = new Thread(this::pump, "tck-worker-stdout-" + process.pid());
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * The class path for workers. Surefire runs tests from a manifest-only booter jar, so {@code java.class.path}
     * may name only that jar; it publishes the real one as {@code surefire.test.class.path}.
     */
    public static String classPath() {
        String cp = System.getProperty("surefire.test.class.path");
        if (cp == null || cp.isBlank()) {
            cp = System.getProperty("java.class.path");
        }
        return cp;
    }

    public static WorkerProcess start(Path dir, Duration lifetime, String... args) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>();
        command.add(java);
        command.add("-Xmx96m");
        command.add("-XX:TieredStopAtLevel=1"); // short-lived: start fast rather than run fast
        // one JIT thread: a start costs about 0.6 s of CPU instead of 0.8 s, and several workers start at once
        command.add("-XX:CICompilerCount=1");
        command.add("-XX:+UseSerialGC");
        command.add("-Xshare:auto");
        command.add("-D" + TckTimings.FACTOR_PROPERTY + "=" + TckTimings.slackFactor());
        command.add("-cp");
        command.add(classPath());
        command.add(TckWorker.class.getName());
        command.add(args[0]);
        command.add(args[1]);
        command.add(args[2]);
        command.add(Long.toString(lifetime.toMillis()));
        for (int i = 3; i < args.length; i++) {
            command.add(args[i]);
        }
        Path err = Files.createTempFile(dir, "worker-", ".err");
        Process p = new ProcessBuilder(command).redirectError(err.toFile()).start();
        return new WorkerProcess(p, err, args[0] + " worker pid " + p.pid());
    }

    /** Sends one line to the worker's standard input (the {@code wait} mode reads its requests there). */
    public void send(String line) throws IOException {
        var in = process.getOutputStream();
        in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
    }

    private void pump() {
        try (BufferedReader r =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                lines.add(line);
            }
        } catch (IOException ignored) {
            // the process died: awaitLine reports what it saw
        }
        lines.add("EOF");
    }

    /** Waits for a line starting with {@code prefix}; fails with the worker's stderr if it does not come. */
    public String awaitLine(String prefix, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            String line = left <= 0 ? null : lines.poll(left, TimeUnit.NANOSECONDS);
            if (line == null) {
                throw new AssertionError(description + " did not print '" + prefix + "' within " + timeout
                        + "; its stderr: " + stderrTail());
            }
            if (line.startsWith(prefix)) {
                return line;
            }
            if (line.startsWith("ERROR") || line.equals("EOF")) {
                throw new AssertionError(
                        description + " failed before '" + prefix + "': " + line + "; its stderr: " + stderrTail());
            }
        }
    }

    /**
     * Every line printed until one starting with {@code prefix} (included) or until {@code timeout}, whichever comes
     * first; never fails. For contracts that judge what a worker said, including when it said too little.
     */
    public List<String> linesUntil(String prefix, Duration timeout) throws InterruptedException {
        List<String> seen = new ArrayList<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            String line = left <= 0 ? null : lines.poll(left, TimeUnit.NANOSECONDS);
            if (line == null || line.equals("EOF")) {
                return seen;
            }
            seen.add(line);
            if (line.startsWith(prefix)) {
                return seen;
            }
        }
    }

    /** Moves every line printed so far, and not yet taken, into {@code into}. Never waits. */
    public void drainTo(List<String> into) {
        lines.drainTo(into);
    }

    /**
     * Sends {@code signal} ({@code STOP}, {@code CONT}) to the worker with the system's {@code kill}; the JDK has no
     * API for job-control signals. A pause is how a GC pause or a frozen VM looks to the store.
     */
    public void signal(String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
                .redirectErrorStream(true)
                .start();
        String out = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new AssertionError("could not send SIG" + signal + " to " + description + ": " + out);
        }
    }

    public long pid() {
        return process.pid();
    }

    /** SIGKILL: the worker gets no chance to release anything. Returns once the process is gone. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    public String stderrTail() {
        try {
            String s = Files.readString(stderr, StandardCharsets.UTF_8);
            return s.length() > 2000 ? s.substring(s.length() - 2000) : s;
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    @Override
    public void close() {
        try {
            process.getOutputStream().close();
        } catch (IOException ignored) {
            // the worker is killed next anyway
        }
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            Files.deleteIfExists(stderr);
        } catch (IOException ignored) {
            // a temp file; the directory is removed too
        }
    }

    @Override
    public String toString() {
        return description;
    }
}
