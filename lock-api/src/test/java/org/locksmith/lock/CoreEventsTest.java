package org.locksmith.lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The core's flight recorder events: each one is recorded when a recording enables it, with its fields filled. */
class CoreEventsTest {
    private static final List<String> EVENTS = List.of(
            "org.locksmith.LockAcquired",
            "org.locksmith.LockReleased",
            "org.locksmith.LockTimedOut",
            "org.locksmith.LockLost",
            "org.locksmith.LockRenewalFailed",
            "org.locksmith.LockBackendError");

    @Test
    void grantsReleasesTimeoutsLossesRenewalFailuresAndStoreErrorsAreRecorded(@TempDir Path dir) throws Exception {
        MemoryBackend backend = MemoryBackend.renewing(Duration.ofMillis(600), Duration.ofMillis(100));
        Path file = dir.resolve("locks.jfr");
        try (Recording recording = new Recording()) {
            EVENTS.forEach(name -> recording.enable(name).withThreshold(Duration.ZERO));
            recording.start();
            try (LockClient client = Locks.client(backend)) {
                // A grant held for 30 ms, and a timed acquire of another thread that gives up after 50 ms.
                LockLease held = client.lock("held").acquire(Duration.ofSeconds(1));
                CompletableFuture<Throwable> other = CompletableFuture.supplyAsync(() -> {
                    try {
                        client.lock("held").acquire(Duration.ofMillis(50));
                        return null;
                    } catch (Throwable t) {
                        return t;
                    }
                });
                assertThat(other.get()).isInstanceOf(LockTimeoutException.class);
                held.release();

                // A lease whose renewals fail until it runs out: renewal failures, then its loss.
                LockLease cut = client.lock("cut").acquire(Duration.ofSeconds(1));
                backend.unreachableKeys.add("cut");
                await().atMost(Duration.ofSeconds(5)).until(() -> !cut.isValid());
                assertThatThrownBy(cut::release).isInstanceOf(LockLostException.class);

                // A store failure on acquire.
                backend.refuseAcquires = true;
                assertThatThrownBy(() -> client.lock("down").acquire(Duration.ofSeconds(1)))
                        .isInstanceOf(LockBackendException.class);
            }
            recording.stop();
            recording.dump(file);
        }
        Map<String, List<RecordedEvent>> byName = RecordingFile.readAllEvents(file).stream()
                .collect(Collectors.groupingBy(e -> e.getEventType().getName()));
        assertThat(byName.keySet()).containsAll(EVENTS);

        RecordedEvent acquired = only(byName, "org.locksmith.LockAcquired", "held");
        assertThat(acquired.getString("backend")).isEqualTo(backend.name());
        assertThat(acquired.getDuration("waitTime")).isGreaterThanOrEqualTo(Duration.ZERO);
        assertThat(acquired.getLong("fencingToken")).as("no FENCING").isEqualTo(-1);

        RecordedEvent released = only(byName, "org.locksmith.LockReleased", "held");
        assertThat(released.getDuration("holdTime")).isGreaterThanOrEqualTo(Duration.ofMillis(50));
        assertThat(released.getBoolean("lost")).isFalse();

        RecordedEvent timedOut = only(byName, "org.locksmith.LockTimedOut", "held");
        assertThat(timedOut.getDuration("waitTime")).isGreaterThanOrEqualTo(Duration.ofMillis(50));

        assertThat(byName.get("org.locksmith.LockRenewalFailed"))
                .allSatisfy(e -> assertThat(e.getString("key")).isEqualTo("cut"))
                .anySatisfy(e -> assertThat(e.getString("reason")).contains("memory store down"));
        assertThat(only(byName, "org.locksmith.LockLost", "cut").getString("reason"))
                .contains("ran out");
        assertThat(only(byName, "org.locksmith.LockReleased", "cut").getBoolean("lost"))
                .isTrue();

        RecordedEvent error = only(byName, "org.locksmith.LockBackendError", "down");
        assertThat(error.getString("operation")).isEqualTo("acquire");
        assertThat(error.getString("message")).contains("memory store unreachable");
    }

    private static RecordedEvent only(Map<String, List<RecordedEvent>> byName, String event, String key) {
        List<RecordedEvent> events = byName.get(event).stream()
                .filter(e -> key.equals(e.getString("key")))
                .toList();
        assertThat(events).as(event + " of key " + key).hasSize(1);
        return events.get(0);
    }
}
