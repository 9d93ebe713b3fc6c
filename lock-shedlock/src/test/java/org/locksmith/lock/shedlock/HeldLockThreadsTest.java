package org.locksmith.lock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;

/**
 * A held ShedLock lock is a detached lease plus a deadline on the provider's timer, not a thread: holding many locks
 * at once, running or kept for lockAtLeastFor, starts no thread per lock.
 */
class HeldLockThreadsTest {
    private static final int LOCKS = 50;

    /** The provider's timer thread, plus slack for a thread the client or the JVM starts meanwhile. */
    private static final int MAX_NEW_THREADS = 5;

    private final String prefix = TestStores.uniquePrefix();
    private final LockClient node = TestStores.REDIS.open();
    private final LockClient otherNode = TestStores.REDIS.open();
    private final LocksmithLockProvider provider = new LocksmithLockProvider(node, prefix);

    @AfterEach
    void close() {
        provider.close();
        node.close();
        otherNode.close();
    }

    @Test
    void holdingFiftyLocksAtOnceStartsNoThreadPerLock() {
        // The clients' own threads (connections, renewer) are started before the count, by a lock taken and freed.
        for (LockClient client : List.of(node, otherNode)) {
            client.lock(prefix + "warm-up").tryAcquire().orElseThrow().release();
        }
        Set<Thread> before = Thread.getAllStackTraces().keySet();

        List<SimpleLock> running = new ArrayList<>();
        for (int i = 0; i < LOCKS; i++) {
            // Half of them run, half are unlocked and kept for lockAtLeastFor: both kinds are held locks.
            Duration atLeast = i % 2 == 0 ? Duration.ZERO : Duration.ofMinutes(1);
            SimpleLock lock = provider.lock(
                            new LockConfiguration(ClockProvider.now(), "job-" + i, Duration.ofMinutes(1), atLeast))
                    .orElseThrow();
            if (atLeast.isZero()) {
                running.add(lock);
            } else {
                lock.unlock();
            }
        }
        List<String> started = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> !before.contains(t))
                .map(Thread::getName)
                .sorted()
                .collect(Collectors.toList());

        for (int i = 0; i < LOCKS; i++) {
            Optional<LockLease> taken = otherNode.lock(prefix + "job-" + i).tryAcquire();
            taken.ifPresent(LockLease::release);
            assertThat(taken)
                    .as("ShedLock lock 'job-%d' should be held, so another node cannot take it", i)
                    .isEmpty();
        }
        assertThat(started)
                .as("threads started while %d ShedLock locks are held at once", LOCKS)
                .hasSizeLessThanOrEqualTo(MAX_NEW_THREADS);
        running.forEach(SimpleLock::unlock);
    }
}
