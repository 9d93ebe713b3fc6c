package org.locksmith.lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** Loss listeners are isolated from each other and from the caller (issue 13), even when one throws an Error. */
class CoreListenersTest {

    @Test
    void aListenerThatThrowsAnErrorStopsNeitherTheOthersNorTheNotifier() throws Exception {
        MemoryBackend store = new MemoryBackend();
        try (LockClient c = Locks.client(store)) {
            LockLease first = c.lock("a").acquire(Duration.ofSeconds(1));
            List<String> heard = new CopyOnWriteArrayList<>();
            first.onLost(e -> {
                throw new AssertionError("listener bug");
            });
            first.onLost(e -> heard.add("a"));
            store.loseSession("a");
            await().atMost(Duration.ofSeconds(5)).until(() -> heard.contains("a"));

            // The notifier still runs listeners of later losses.
            LockLease second = c.lock("b").acquire(Duration.ofSeconds(1));
            second.onLost(e -> heard.add("b"));
            store.loseSession("b");
            await().atMost(Duration.ofSeconds(5)).until(() -> heard.contains("b"));

            assertThatThrownBy(first::release).isInstanceOf(LockLostException.class);
            assertThatThrownBy(second::release).isInstanceOf(LockLostException.class);
        }
    }

    @Test
    void anErrorInAListenerDoesNotReplaceTheLockLostExceptionOfRelease() throws Exception {
        MemoryBackend store = new MemoryBackend();
        try (LockClient c = Locks.client(store)) {
            LockLease lease = c.lock("k").acquire(Duration.ofSeconds(1));
            List<String> heard = new CopyOnWriteArrayList<>();
            lease.onLost(e -> {
                throw new StackOverflowError("listener bug");
            });
            lease.onLost(e -> heard.add("second"));
            // Lost in the store without a report: release() is where the loss is found and listeners run.
            store.dropWithoutReport("k");
            assertThatThrownBy(lease::release).isInstanceOf(LockLostException.class);
            assertThat(heard).containsExactly("second");
        }
    }
}
