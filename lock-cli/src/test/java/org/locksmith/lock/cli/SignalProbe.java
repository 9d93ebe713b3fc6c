package org.locksmith.lock.cli;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Prints the ignored-signal mask ({@code SigIgn} of {@code /proc/<pid>/status}) of its own JVM and of a child it
 * starts the way the CLI tests start {@code locksmith} ({@link Cli#withDefaultSignals}).
 */
public final class SignalProbe {
    private SignalProbe() {}

    public static void main(String[] args) throws Exception {
        System.out.println("SELF " + sigIgn(Files.readString(Path.of("/proc/self/status"))));
        Process child = new ProcessBuilder(Cli.withDefaultSignals("cat", "/proc/self/status"))
                .redirectErrorStream(true)
                .start();
        String status = new String(child.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        child.waitFor();
        System.out.println("CHILD " + sigIgn(status));
    }

    private static String sigIgn(String status) {
        return status.lines()
                .filter(l -> l.startsWith("SigIgn:"))
                .map(l -> l.substring("SigIgn:".length()).trim())
                .findFirst()
                .orElse("?");
    }
}
