package org.locksmith.lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Races of the shared core, each played in a fixed order through {@link MemoryBackend}'s hooks. */
class CoreRacesTest {
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final CountDownLatch unblock = new CountDownLatch(1);

    @AfterEach
    void tearDown() {
        unblock.countDown();
        threads.shutdownNow();
    }

    private static MemoryBackend renewing(Duration leaseTime, Duration renewInterval) {
        return new MemoryBackend(
                EnumSet.of(
                        LockFeature.REENTRANT,
                        LockFeature.LEASE_EXPIRY,
                        LockFeature.AUTO_RENEWAL,
                        LockFeature.LOSS_DETECTION),
                leaseTime,
                renewInterval);
    }

    /** Blocks every renewal until {@link #unblock}; returns a latch that opens when the first one started. */
    private CountDownLatch blockRenewals(MemoryBackend backend) {
        CountDownLatch renewing = new CountDownLatch(1);
        backend.renewHook = () -> {
            renewing.countDown();
            awaitUnblock();
        };
        return renewing;
    }

    private void awaitUnblock() {
        try {
            unblock.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Blocks the core's timer thread (the one that watches waiters and leases) in a cancel action, until {@link
     * #unblock}: a waiter on key "other" in an uninterruptible store call reaches its deadline and the core's
     * cancellation of it never returns. A backend must not block there; here it stands for "the core has not
     * looked at its clocks yet".
     */
    private void blockTimers(LockClient client, MemoryBackend backend) throws Exception {
        CountDownLatch cancelling = new CountDownLatch(1);
        backend.uninterruptible = true;
        backend.cancelHook = () -> {
            cancelling.countDown();
            awaitUnblock();
        };
        client.lock("other").acquire(Duration.ofSeconds(1)); // held by the test's thread until the client closes
        threads.submit(() -> client.lock("other").tryAcquire(Duration.ofMillis(50)));
        assertThat(cancelling.await(5, TimeUnit.SECONDS)).isTrue();
    }

    /** Re-entry hands out a lease "valid now" or none: one past its time is reported lost, without I/O. */
    @Test
    void reentryIntoALeasePastItsTimeFailsWithoutIo() throws Exception {
        MemoryBackend backend = new MemoryBackend(
                EnumSet.of(LockFeature.REENTRANT, LockFeature.LEASE_EXPIRY, LockFeature.LOSS_DETECTION),
                Duration.ofMillis(100),
                Duration.ZERO);
        try (LockClient client = Locks.client(backend)) {
            blockTimers(client, backend);
            DistributedLock lock = client.lock("k");
            LockLease lease = lock.acquire(Duration.ofSeconds(1));
            List<LockLostException> heard = new CopyOnWriteArrayList<>();
            lease.onLost(heard::add);
            await().atMost(Duration.ofSeconds(5)).until(() -> !lease.isValid());
            int calls = backend.acquireCalls.get();

            assertThatThrownBy(() -> lock.acquire(Duration.ofSeconds(1)))
                    .isInstanceOf(LockLostException.class)
                    .cause()
                    .hasMessageContaining("ran out");
            assertThatThrownBy(lock::tryAcquire).isInstanceOf(LockLostException.class);
            assertThat(lease.holdCount()).isEqualTo(1);
            assertThat(backend.acquireCalls).hasValue(calls);
            await().atMost(Duration.ofSeconds(5)).until(() -> heard.size() == 1);
            assertThatThrownBy(lease::release).isInstanceOf(LockLostException.class);
            assertThat(heard).hasSize(1);
            assertThat(backend.releaseCalls).hasValue(1);
        }
    }

    /**
     * A release decides whether the lease was lost from the state it ends, not from an earlier look: a loss reported
     * while the release waited for a renewal to finish is reported by the release, like the listeners report it.
     */
    @Test
    void aLossReportedWhileTheReleaseWaitsForARenewalIsReportedByTheRelease() throws Exception {
        MemoryBackend backend = renewing(Duration.ofSeconds(10), Duration.ofMillis(20));
        CountDownLatch renewing = blockRenewals(backend);
        try (LockClient client = Locks.client(backend)) {
            CountDownLatch release = new CountDownLatch(1);
            AtomicReference<Thread> owner = new AtomicReference<>();
            AtomicReference<LockLease> leaseRef = new AtomicReference<>();
            List<LockLostException> heard = new CopyOnWriteArrayList<>();
            CompletableFuture<Throwable> released = CompletableFuture.supplyAsync(
                    () -> {
                        try {
                            owner.set(Thread.currentThread());
                            LockLease lease = client.lock("k").acquire(Duration.ofSeconds(1));
                            lease.onLost(heard::add);
                            leaseRef.set(lease);
                            release.await();
                            lease.release();
                            return null;
                        } catch (Throwable t) {
                            return t;
                        }
                    },
                    threads);
            assertThat(renewing.await(5, TimeUnit.SECONDS)).isTrue();
            await().atMost(Duration.ofSeconds(5)).until(() -> leaseRef.get() != null);
            release.countDown();
            // The owner has started its release and waits for the renewal, which holds the lease's I/O lock.
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> leaseRef.get().holdCount() == 0 && owner.get().getState() == Thread.State.WAITING);
            backend.reportLostKeepingState("k");
            await().atMost(Duration.ofSeconds(5)).until(() -> heard.size() == 1);
            unblock.countDown();

            assertThat(released.get(5, TimeUnit.SECONDS))
                    .as("the release of a lease whose listeners heard it lost")
                    .isInstanceOf(LockLostException.class)
                    .hasCauseReference(heard.get(0));
            assertThat(backend.isHeld("k")).isFalse();
            assertThat(backend.releaseCalls).hasValue(1);
        }
    }
}
