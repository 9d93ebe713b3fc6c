package org.locksmith.lock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The build may be launched in the background (a job runner, {@code nohup ... &}), where every process inherits
 * SIGINT as ignored and a JVM started so never installs its SIGINT handler. The tests that send SIGINT to {@code
 * locksmith} start it with default dispositions; this proves that holds when the test JVM itself ignores SIGINT,
 * whatever way this build was launched.
 */
class SignalDispositionTest {
    /** Bit of SIGINT (signal 2) in a {@code SigIgn} mask. */
    private static final long SIGINT_BIT = 1L << 1;

    @Test
    void processesTheTestsSignalGetDefaultDispositionsEvenWhenTheBuildIgnoresSigint() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process probe = new ProcessBuilder(
                        "bash",
                        "-c",
                        "trap '' INT; exec \"$0\" -Xmx64m -XX:TieredStopAtLevel=1 -cp \"$1\" "
                                + SignalProbe.class.getName(),
                        java,
                        Cli.classPath())
                .redirectErrorStream(true)
                .start();
        String out = new String(probe.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(probe.waitFor(60, TimeUnit.SECONDS)).as(out).isTrue();
        long self = mask(out, "SELF ");
        long child = mask(out, "CHILD ");
        assertThat(self & SIGINT_BIT)
                .as("the probe JVM, started with SIGINT ignored as a background build is: %s", out)
                .isEqualTo(SIGINT_BIT);
        assertThat(child & SIGINT_BIT)
                .as(
                        "a process started as the tests start locksmith must see SIGINT at its default (needs GNU env"
                                + " with --default-signal, coreutils 8.31+): %s",
                        out)
                .isZero();
    }

    private static long mask(String out, String prefix) {
        return out.lines()
                .filter(l -> l.startsWith(prefix))
                .map(l -> Long.parseUnsignedLong(l.substring(prefix.length()).trim(), 16))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no " + prefix + "line in: " + out));
    }
}
