package org.locksmith.lock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Renewal outcomes are per lease: a node that fails or stalls makes only its own leases unconfirmed, and a release
 * waits for its own lease's renewal only.
 */
class CoreRenewalTest {
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final List<LockClient> clients = new CopyOnWriteArrayList<>();
    private final CountDownLatch unblock = new CountDownLatch(1);

    @AfterEach
    void tearDown() {
        unblock.countDown();
        clients.forEach(LockClient::close);
        threads.shutdownNow();
    }

    private LockClient open(MemoryBackend backend) {
        LockClient client = Locks.client(backend);
        clients.add(client);
        return client;
    }

    /** One unreachable node costs the leases on it, not the leases on the healthy ones. */
    @Test
    void aFailedRenewalOfOneLeaseLeavesTheOthersConfirmed() throws Exception {
        MemoryBackend backend = MemoryBackend.renewing(Duration.ofMillis(400), Duration.ofMillis(50));
        LockClient client = open(backend);
        LockLease down = client.lock("on-a-dead-node").acquire(Duration.ofSeconds(1));
        List<LockLease> healthy = List.of(
                client.lock("a").acquire(Duration.ofSeconds(1)),
                client.lock("b").acquire(Duration.ofSeconds(1)),
                client.lock("c").acquire(Duration.ofSeconds(1)));
        backend.unreachableKeys.add("on-a-dead-node");
        int before = backend.renewCalls.get();

        // Three lease times of renewal rounds.
        Thread.sleep(1200);

        assertThat(backend.renewCalls.get() - before).isGreaterThan(20);
        assertThat(down.isValid()).as("the lease on the unreachable node").isFalse();
        for (LockLease lease : healthy) {
            assertThat(lease.isValid())
                    .as("lease of '%s' on a healthy node while another node is unreachable", lease.key())
                    .isTrue();
        }
        healthy.forEach(LockLease::release);
    }

    /** A renewal stalled on one node does not hold up the release of a lease on another. */
    @Test
    void aReleaseWaitsForItsOwnRenewalOnly() throws Exception {
        MemoryBackend backend = MemoryBackend.renewing(Duration.ofSeconds(30), Duration.ofMillis(50));
        backend.parallelRenewal = true;
        LockClient client = open(backend);
        LockLease fast = client.lock("fast").acquire(Duration.ofSeconds(1));
        LockLease slow = client.lock("slow").acquire(Duration.ofSeconds(1));
        CountDownLatch stalled = new CountDownLatch(1);
        backend.renewKeyHook = key -> {
            if (key.equals("slow")) {
                stalled.countDown();
                try {
                    unblock.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        assertThat(stalled.await(5, TimeUnit.SECONDS)).isTrue();
        // Let the fast lease's renewal of this round answer.
        Thread.sleep(100);

        long start = System.nanoTime();
        fast.release(); // if it waited for the stalled renewal, it would take until the test unblocks it (30 s)
        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        assertThat(took)
                .as("ms to release a lease while the renewal of another lease is stalled")
                .isLessThan(500);
        unblock.countDown();
        slow.release();
    }
}
