package org.locksmith.lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** {@link LockObserver}s added to a client receive its events, in order, and one that throws harms nothing. */
class CoreObserversTest {

    /** Records each event as one line. */
    static final class Recorder implements LockObserver {
        final List<String> events = new CopyOnWriteArrayList<>();

        @Override
        public void acquired(String backend, String key, long waitNanos, long fencingToken) {
            assertThat(waitNanos).isNotNegative();
            events.add("acquired " + key + " token " + fencingToken);
        }

        @Override
        public void released(String backend, String key, long holdNanos, boolean lost) {
            assertThat(holdNanos).isNotNegative();
            events.add("released " + key + (lost ? " lost" : ""));
        }

        @Override
        public void timedOut(String backend, String key, long waitNanos) {
            assertThat(waitNanos).isGreaterThanOrEqualTo(Duration.ofMillis(50).toNanos());
            events.add("timedOut " + key);
        }

        @Override
        public void lost(String backend, String key, String reason) {
            events.add("lost " + key);
        }

        @Override
        public void renewalFailed(String backend, String key, String reason) {
            assertThat(reason).contains("memory store down");
            events.add("renewalFailed " + key);
        }

        @Override
        public void backendError(String backend, String key, String operation, LockBackendException error) {
            events.add("backendError " + key + " " + operation);
        }
    }

    @Test
    void everyEventReachesEveryObserverAndAThrowingOneHarmsNothing() throws Exception {
        MemoryBackend backend = MemoryBackend.renewing(Duration.ofMillis(600), Duration.ofMillis(100));
        Recorder first = new Recorder();
        Recorder second = new Recorder();
        LockObserver throwing = new LockObserver() {
            @Override
            public void acquired(String backend, String key, long waitNanos, long fencingToken) {
                throw new AssertionError("an observer that throws an Error");
            }

            @Override
            public void released(String backend, String key, long holdNanos, boolean lost) {
                throw new IllegalStateException("an observer that throws");
            }
        };
        try (LockClient client = Locks.client(backend)) {
            client.addObserver(first);
            client.addObserver(throwing);
            client.addObserver(second);

            LockLease held = client.lock("held").acquire(Duration.ofSeconds(1));
            client.lock("held").acquire(Duration.ofSeconds(1)).release(); // a re-entry: not an event
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

            LockLease cut = client.lock("cut").acquire(Duration.ofSeconds(1));
            backend.unreachableKeys.add("cut");
            await().atMost(Duration.ofSeconds(5)).until(() -> !cut.isValid());
            assertThatThrownBy(cut::release).isInstanceOf(LockLostException.class);

            backend.refuseAcquires = true;
            assertThatThrownBy(() -> client.lock("down").acquire(Duration.ofSeconds(1)))
                    .isInstanceOf(LockBackendException.class);

            client.removeObserver(second);
            backend.refuseAcquires = false;
            client.lock("after").acquire(Duration.ofSeconds(1)).release();
        }
        for (Recorder r : List.of(first, second)) {
            assertThat(r.events)
                    .startsWith("acquired held token -1", "timedOut held", "released held", "acquired cut token -1")
                    .contains("renewalFailed cut", "lost cut", "released cut lost", "backendError down acquire");
            assertThat(r.events.indexOf("lost cut")).isLessThan(r.events.indexOf("released cut lost"));
        }
        assertThat(first.events).endsWith("acquired after token -1", "released after");
        assertThat(second.events).doesNotContain("acquired after token -1");
    }

    @Test
    void aNullObserverIsRefused() {
        try (LockClient client = Locks.client(MemoryBackend.renewing(Duration.ofMillis(600), Duration.ofMillis(100)))) {
            assertThatThrownBy(() -> client.addObserver(null)).isInstanceOf(NullPointerException.class);
        }
    }
}
