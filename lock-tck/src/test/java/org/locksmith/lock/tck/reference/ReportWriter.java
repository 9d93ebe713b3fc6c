package org.locksmith.lock.tck.reference;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.locksmith.lock.tck.internal.TckResults;

/**
 * A JVM that writes TCK results into a report directory, as one module of a parallel build does: {@code dir
 * prefix count} writes {@code count} results of backends {@code prefix-0 ...} at once with the other writers; {@code
 * dir prefix hold} takes the directory's lock as {@link TckResults#write} does, says so in {@code prefix.held},
 * writes its result's JSON a second later, and lets go. Started by {@link ReportWritersTest}; ends by itself.
 */
final class ReportWriter {
    private ReportWriter() {}

    static TckResults.BackendRun result(String backend) {
        return new TckResults.BackendRun(
                backend,
                "org.example." + backend.replace('-', '_') + "TckTest",
                new TreeSet<>(List.of("FENCING")),
                1.0,
                "now",
                List.of(
                        new TckResults.TestResult("c01_mutualExclusion_severalClients", "passed", null, 5, Map.of()),
                        new TckResults.TestResult("c10_fencing_tokensRiseAcrossClients", "passed", null, 5, Map.of())));
    }

    private static void hold(Path dir, String backend) throws Exception {
        try (var channel = java.nio.channels.FileChannel.open(
                        dir.resolve(TckResults.LOCK_FILE),
                        java.nio.file.StandardOpenOption.CREATE,
                        java.nio.file.StandardOpenOption.WRITE);
                var lock = channel.lock()) {
            java.nio.file.Files.writeString(dir.resolve(backend + ".held"), "");
            Thread.sleep(1000); // a deliberate hold: the other JVM's write() must wait for it
            Path tmp = dir.resolve(backend + ".part");
            java.nio.file.Files.writeString(tmp, TckResults.toJson(result(backend)));
            java.nio.file.Files.move(tmp, dir.resolve(backend + ".json"), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        }
    }

    /** Says it is ready, waits up to 30 s for the go file, so that every writer writes at once. */
    static void awaitGo(Path dir, String name) throws Exception {
        java.nio.file.Files.writeString(dir.resolve(name + ".ready"), "");
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
        while (!java.nio.file.Files.exists(dir.resolve("go")) && System.nanoTime() - deadline < 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        if (args[2].equals("hold")) {
            hold(dir, args[1]);
            return;
        }
        awaitGo(dir, args[1]);
        for (int i = 0; i < Integer.parseInt(args[2]); i++) {
            TckResults.write(dir, result(args[1] + "-" + i));
        }
    }
}
