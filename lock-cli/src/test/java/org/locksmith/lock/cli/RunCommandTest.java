package org.locksmith.lock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;

/** {@code locksmith run} against each real backend: exclusion between processes, and the not-granted path. */
class RunCommandTest {

    private static final Duration LIMIT = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private static String key(String what) {
        return "locksmith-cli-test:" + what + ":" + UUID.randomUUID();
    }

    /** Two processes on one key: their children's intervals never overlap, and both exit 0. */
    @ParameterizedTest
    @ValueSource(strings = {"redis", "mysql", "postgres", "zookeeper"})
    void twoRunsOnOneKeyNeverOverlap(String backend) throws Exception {
        String url = TestServers.url(backend);
        String key = key("exclusion");
        Path log = dir.resolve("intervals.log");
        // Each child appends its start and end (nanoseconds since the epoch) with its fencing token.
        String script = "echo \"S $LOCKSMITH_FENCING_TOKEN $(date +%s%N)\" >> \"$0\"; sleep 1;"
                + " echo \"E $LOCKSMITH_FENCING_TOKEN $(date +%s%N)\" >> \"$0\"";
        try (Cli a = Cli.start(
                        dir,
                        "run",
                        "--url",
                        url,
                        "--key",
                        key,
                        "--wait",
                        "45s",
                        "--",
                        "sh",
                        "-c",
                        script,
                        log.toString());
                Cli b = Cli.start(
                        dir,
                        "run",
                        "--url",
                        url,
                        "--key",
                        key,
                        "--wait",
                        "45s",
                        "--",
                        "sh",
                        "-c",
                        script,
                        log.toString())) {
            assertThat(a.await(LIMIT)).as("first run: %s", a).isZero();
            assertThat(b.await(LIMIT)).as("second run: %s", b).isZero();
        }
        List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
        assertThat(lines).as("both children ran, one after the other").hasSize(4);
        Map<String, long[]> intervals = new LinkedHashMap<>();
        for (String line : lines) {
            String[] f = line.split(" ");
            long[] iv = intervals.computeIfAbsent(f[1], t -> new long[2]);
            iv[f[0].equals("S") ? 0 : 1] = Long.parseLong(f[2]);
        }
        assertThat(intervals)
                .as("two grants with distinct fencing tokens: %s", lines)
                .hasSize(2);
        List<long[]> sorted = new ArrayList<>(intervals.values());
        sorted.sort((x, y) -> Long.compare(x[0], y[0]));
        assertThat(sorted.get(1)[0])
                .as("the second child started (ns) only after the first ended: %s", lines)
                .isGreaterThanOrEqualTo(sorted.get(0)[1]);
        List<Long> tokensInOrder = new ArrayList<>();
        for (Map.Entry<String, long[]> e : intervals.entrySet()) {
            tokensInOrder.add(Long.parseLong(e.getKey()));
        }
        assertThat(tokensInOrder).as("fencing tokens rise with each grant").isSorted();
    }

    /** Not granted within --wait (0: one attempt): status 75, the command never runs, nothing left behind. */
    @ParameterizedTest
    @ValueSource(strings = {"redis", "mysql", "postgres", "zookeeper"})
    void notGrantedWithinWait(String backend) throws Exception {
        String url = TestServers.url(backend);
        String key = key("busy");
        Path ran = dir.resolve("ran");
        try (LockClient holder = Locks.open(url)) {
            LockLease lease = holder.lock(key).acquire(Duration.ofSeconds(10));
            try (Cli once = Cli.start(
                            dir, "run", "--url", url, "--key", key, "--wait", "0", "--", "touch", ran.toString());
                    Cli timed = Cli.start(
                            dir, "run", "--url", url, "--key", key, "--wait", "700ms", "--", "touch", ran.toString())) {
                assertThat(once.await(LIMIT)).as("%s", once).isEqualTo(ExitStatus.NOT_GRANTED);
                assertThat(once.err()).contains("not granted at once").doesNotContain("Exception");
                assertThat(timed.await(LIMIT)).as("%s", timed).isEqualTo(ExitStatus.NOT_GRANTED);
                assertThat(timed.err()).contains("not granted within 700ms");
            }
            assertThat(ran).as("the command must not run without the lock").doesNotExist();
            lease.release();
            Optional<LockLease> again = holder.lock(key).tryAcquire();
            assertThat(again)
                    .as("the lock is free: the refused runs left nothing behind")
                    .isPresent();
            again.get().release();
        }
        try (Cli free =
                Cli.start(dir, "run", "--url", url, "--key", key, "--wait", "0", "--", "touch", ran.toString())) {
            assertThat(free.await(LIMIT)).as("%s", free).isZero();
        }
        assertThat(ran).exists();
    }
}
