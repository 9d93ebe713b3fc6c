package org.locksmith.lock.tck.reference;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.locksmith.lock.tck.internal.TckResults;
import org.locksmith.lock.tck.internal.WorkerProcess;

/**
 * A parallel build ({@code mvn -T}) runs TCK classes of several modules in separate JVMs that write into one report
 * directory: every result must land in the table, and no file may be read half written.
 */
class ReportWritersTest {
    private static final int WRITERS = 3;
    private static final int EACH = 12;

    @TempDir
    Path dir;

    private Process start(String backend, String what) throws Exception {
        return new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xmx64m",
                        "-XX:TieredStopAtLevel=1",
                        "-XX:+UseSerialGC",
                        "-cp",
                        WorkerProcess.classPath(),
                        ReportWriter.class.getName(),
                        dir.toString(),
                        backend,
                        what)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve(backend + ".log").toFile())
                .start();
    }

    private void awaitExit(Process p, String backend) throws Exception {
        assertThat(p.waitFor(60, TimeUnit.SECONDS))
                .as("report writer JVM %s ends within 60 s", backend)
                .isTrue();
        assertThat(p.exitValue())
                .as("report writer JVM %s: %s", backend, Files.readString(dir.resolve(backend + ".log")))
                .isZero();
    }

    private String tableHeader() throws Exception {
        return Files.readString(dir.resolve(TckResults.TABLE), StandardCharsets.UTF_8)
                .lines()
                .filter(l -> l.startsWith("| contract |"))
                .findFirst()
                .orElseThrow();
    }

    /**
     * Another JVM holds the directory's lock and adds its result meanwhile: this JVM's write waits its turn, so the
     * table it writes lists that result too, instead of overwriting a newer table with an older listing.
     */
    @Test
    void aWriterWaitsForAnotherJvmsTurn() throws Exception {
        Process holder = start("other", "hold");
        try {
            Awaitility.await("the other JVM to hold the report directory's lock")
                    .atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> Files.exists(dir.resolve("other.held")));
            TckResults.write(dir, ReportWriter.result("here"));
            awaitExit(holder, "other");
        } finally {
            holder.destroyForcibly();
        }
        assertThat(tableHeader()).contains("| here |").contains("| other |");
    }

    @Test
    void jvmsWritingAtOnceLoseNoResult() throws Exception {
        List<Process> writers = new ArrayList<>();
        try {
            for (int w = 0; w < WRITERS; w++) {
                writers.add(start("jvm" + w, Integer.toString(EACH)));
            }
            Awaitility.await("report writer JVMs ready")
                    .atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> {
                        try (var files = Files.list(dir)) {
                            return files.filter(p -> p.toString().endsWith(".ready"))
                                            .count()
                                    == WRITERS;
                        }
                    });
            // All at once, this JVM too: the race is between one JVM's listing and another's table.
            Files.writeString(dir.resolve("go"), "");
            for (int i = 0; i < EACH; i++) {
                TckResults.write(dir, ReportWriter.result("here-" + i));
            }
            for (int w = 0; w < WRITERS; w++) {
                awaitExit(writers.get(w), "jvm" + w);
            }
        } finally {
            writers.forEach(Process::destroyForcibly);
        }
        // The last table written must list every result, whichever JVM wrote it.
        String header = tableHeader();
        List<String> missing = new ArrayList<>();
        for (String prefix : List.of("here", "jvm0", "jvm1", "jvm2")) {
            for (int i = 0; i < EACH; i++) {
                if (!header.contains("| " + prefix + "-" + i + " |")) {
                    missing.add(prefix + "-" + i);
                }
            }
        }
        assertThat(missing)
                .as("backends missing from the table's header " + header)
                .isEmpty();
        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".part")))
                    .as("temporary files left behind")
                    .isEmpty();
        }
    }
}
