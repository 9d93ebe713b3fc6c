package org.locksmith.lock.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;

/**
 * Run only in a Java 21-23 JVM of its own, by {@link RedisVirtualThreadPinTest} (its name matches no test pattern, so
 * the build's own JVM never runs it): virtual threads borrow and return a URL-opened client's connections under
 * contention while a flight recording counts {@code jdk.VirtualThreadPinned} events, each of which is a carrier
 * thread blocked in a monitor. Expects none.
 */
class RedisPinProbe {
    static final String URL = "locksmith.pinprobe.url";
    private static final String PINNED = "jdk.VirtualThreadPinned";

    @Test
    void virtualThreadsNeverPinTheirCarriers() throws Exception {
        int feature = Runtime.version().feature();
        assertTrue(
                feature >= 21 && feature <= 23,
                "the probe needs Java 21-23, where a virtual thread parked in a monitor pins its carrier; this is "
                        + feature);
        ExecutorService threads = (ExecutorService)
                Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        // Few connections for many threads: borrows and returns meet on the pool all the time.
        try (LockClient locks = Locks.open(System.getProperty(URL) + "&poolSize=4&waitPoolSize=4")) {
            churn(locks, threads, 200); // class loading and first connections pin too, once: not counted
            Path jfr = Files.createTempFile("locksmith-pin-probe", ".jfr");
            try (Recording recording = new Recording()) {
                recording.enable(PINNED).withThreshold(Duration.ZERO).withStackTrace();
                recording.start();
                churn(locks, threads, 2_000);
                recording.stop();
                recording.dump(jfr);
            }
            Map<String, Integer> stacks = new TreeMap<>();
            for (RecordedEvent event : RecordingFile.readAllEvents(jfr)) {
                if (event.getEventType().getName().equals(PINNED)) {
                    stacks.merge(frames(event), 1, Integer::sum);
                }
            }
            Files.deleteIfExists(jfr);
            int pinned = stacks.values().stream().mapToInt(Integer::intValue).sum();
            System.out.println("pin-probe: " + pinned + " pinned events");
            assertEquals(0, pinned, () -> pinned + " pinned events, by stack: " + stacks);
        } finally {
            threads.shutdownNow();
        }
    }

    /** {@code count} virtual threads, each taking and releasing five keys of its own, all at once. */
    private static void churn(LockClient locks, ExecutorService threads, int count) throws Exception {
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < count; t++) {
            String key = "pin-probe:" + t;
            done.add(threads.submit(() -> {
                for (int i = 0; i < 5; i++) {
                    try (LockLease lease = locks.lock(key + ":" + i).acquire(Duration.ofSeconds(30))) {
                        assertTrue(lease.isValid());
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get(60, TimeUnit.SECONDS);
        }
    }

    private static String frames(RecordedEvent event) {
        if (event.getStackTrace() == null) {
            return "(no stack trace)";
        }
        StringBuilder s = new StringBuilder();
        for (RecordedFrame f : event.getStackTrace().getFrames()) {
            String type = f.getMethod().getType().getName();
            if (!type.startsWith("java.") && !type.startsWith("jdk.")) {
                s.append(type)
                        .append('.')
                        .append(f.getMethod().getName())
                        .append(':')
                        .append(f.getLineNumber());
                s.append(" <- ");
                if (s.length() > 400) {
                    break;
                }
            }
        }
        return s.toString();
    }
}
