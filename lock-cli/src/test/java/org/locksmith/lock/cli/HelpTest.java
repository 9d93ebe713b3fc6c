package org.locksmith.lock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Help is wrapped to the terminal's width, and to 80 columns where there is no terminal. */
class HelpTest {

    @TempDir
    Path dir;

    /** {@code locksmith run --help}, on a terminal {@code columns} wide (util-linux script(1) gives it one). */
    private static List<String> helpOnTerminal(int columns) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String command = "stty cols " + columns + "; exec '" + java + "' -XX:TieredStopAtLevel=1 -cp '"
                + Cli.classPath() + "' " + Main.class.getName() + " run --help";
        Process p = new ProcessBuilder("script", "-qec", command, "/dev/null")
                .redirectErrorStream(true)
                .start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("help ended").isTrue();
        String text = new String(out, StandardCharsets.UTF_8)
                .replaceAll("\u001B\\[[0-9;]*m", "") // colours and styles
                .replace("\r", "");
        assertThat(p.exitValue()).as(text).isZero();
        assertThat(text).contains("Usage: locksmith run");
        return Arrays.asList(text.split("\n"));
    }

    private static int widest(List<String> lines) {
        return lines.stream().mapToInt(String::length).max().orElse(0);
    }

    @Test
    void helpFillsAWideTerminal() throws Exception {
        List<String> lines = helpOnTerminal(140);
        assertThat(widest(lines))
                .as("widest line on a 140-column terminal: %s", lines)
                .isBetween(100, 140);
    }

    @Test
    void helpFitsANarrowTerminal() throws Exception {
        List<String> lines = helpOnTerminal(60);
        assertThat(widest(lines))
                .as("widest line on a 60-column terminal: %s", lines)
                .isLessThanOrEqualTo(60);
    }

    @Test
    void helpWithoutTerminalIs80Columns() throws Exception {
        try (Cli cli = Cli.start(dir, "run", "--help")) {
            assertThat(cli.await(java.time.Duration.ofSeconds(60))).isZero();
            List<String> lines = Arrays.asList(cli.out().split("\n"));
            assertThat(widest(lines)).as("%s", lines).isLessThanOrEqualTo(80);
        }
    }
}
