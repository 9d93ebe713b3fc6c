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
    private final List<LockClient> clients = new CopyOnWriteArrayList<>();
    /** Opens every hook that blocks a core thread. */
    private final CountDownLatch unblock = new CountDownLatch(1);

    private final AtomicReference<String> renewalThread = new AtomicReference<>();
    private final AtomicReference<String> cancelThread = new AtomicReference<>();

    @AfterEach
    void tearDown() {
        unblock.countDown(); // first: close() waits for the waiters that a blocked hook keeps
        clients.forEach(LockClient::close);
        threads.shutdownNow();
    }

    private LockClient open(MemoryBackend backend) {
        LockClient client = Locks.client(backend);
        clients.add(client);
        return client;
    }

    private void awaitUnblock() {
        try {
            unblock.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Blocks every renewal in the store until {@link #unblock}; returns a latch that opens when one started. */
    private CountDownLatch blockRenewals(MemoryBackend backend) {
        CountDownLatch renewing = new CountDownLatch(1);
        backend.renewHook = () -> {
            renewalThread.compareAndSet(null, Thread.currentThread().getName());
            renewing.countDown();
            awaitUnblock();
        };
        return renewing;
    }

    /**
     * Blocks a cancel action until {@link #unblock}: a waiter on key "other", in an uninterruptible store call,
     * reaches its deadline and the core's cancellation of it never returns. A backend must not block there; the core
     * runs cancel actions on helper threads, so that one that does stops no timer of the core.
     */
    private void blockACancelAction(LockClient client, MemoryBackend backend) throws Exception {
        CountDownLatch cancelling = new CountDownLatch(1);
        backend.uninterruptible = true;
        backend.cancelHook = () -> {
            cancelThread.compareAndSet(null, Thread.currentThread().getName());
            cancelling.countDown();
            awaitUnblock();
        };
        client.lock("other").acquire(Duration.ofSeconds(1)); // held by the test's thread until the client closes
        threads.submit(() -> client.lock("other").tryAcquire(Duration.ofMillis(50)));
        assertThat(cancelling.await(5, TimeUnit.SECONDS)).isTrue();
    }

    /**
     * Re-entry hands out a lease "valid now" or none: one past its time is reported lost, without I/O, whether the
     * expiry timer or the re-entry notices it first.
     */
    @Test
    void reentryIntoALeasePastItsTimeFailsWithoutIo() throws Exception {
        MemoryBackend backend = new MemoryBackend(
                EnumSet.of(LockFeature.REENTRANT, LockFeature.LEASE_EXPIRY, LockFeature.LOSS_DETECTION),
                Duration.ofMillis(100),
                Duration.ZERO);
        LockClient client = open(backend);
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

    /** A renewal stuck in the store does not hold up the watch that cancels waiting threads. */
    @Test
    void aRenewalBlockedInTheStoreDelaysNoWaitersCancellation() throws Exception {
        MemoryBackend backend = MemoryBackend.renewing(Duration.ofSeconds(30), Duration.ofMillis(20));
        backend.uninterruptible = true;
        CountDownLatch renewing = blockRenewals(backend);
        LockClient client = open(backend);
        LockLease lease = client.lock("k").acquire(Duration.ofSeconds(1));
        assertThat(renewing.await(5, TimeUnit.SECONDS)).isTrue();

        long start = System.nanoTime();
        CompletableFuture<Boolean> timed = CompletableFuture.supplyAsync(
                () -> {
                    try {
                        return client.lock("k")
                                .tryAcquire(Duration.ofMillis(100))
                                .isPresent();
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                },
                threads);
        assertThat(timed.get(5, TimeUnit.SECONDS)).isFalse();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                .as("a 100 ms deadline while a renewal is stuck")
                .isLessThan(1000);

        AtomicReference<Thread> waiter = new AtomicReference<>();
        CompletableFuture<Throwable> interrupted = CompletableFuture.supplyAsync(
                () -> {
                    waiter.set(Thread.currentThread());
                    try {
                        client.lock("k").acquire(Duration.ofSeconds(30));
                        return null;
                    } catch (Throwable t) {
                        return t;
                    }
                },
                threads);
        await().atMost(Duration.ofSeconds(5)).until(() -> backend.waiters() == 1);
        start = System.nanoTime();
        waiter.get().interrupt();
        assertThat(interrupted.get(5, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                .as("an interrupt while a renewal is stuck")
                .isLessThan(1000);
        assertThat(renewalThread.get()).startsWith("locksmith-renewal-");

        unblock.countDown();
        lease.release();
    }

    /** A cancel action that blocks (against the SPI) stops no renewal: no lease is lost for it. */
    @Test
    void aBlockedCancelActionStopsNoRenewal() throws Exception {
        MemoryBackend backend = MemoryBackend.renewing(Duration.ofMillis(300), Duration.ofMillis(50));
        LockClient client = open(backend);
        blockACancelAction(client, backend);
        LockLease lease = client.lock("k").acquire(Duration.ofSeconds(1));
        int before = backend.renewCalls.get();
        // Twelve renewals of 50 ms each span two lease times of 300 ms.
        await().atMost(Duration.ofSeconds(5)).until(() -> backend.renewCalls.get() >= before + 12);
        assertThat(lease.isValid())
                .as("a lease of 300 ms renewed every 50 ms while the timer thread is blocked")
                .isTrue();
        assertThat(cancelThread.get()).startsWith("locksmith-helper-");
        lease.release();
    }

    /**
     * close() releases every granted lease before it closes the backend, also one whose grant lands while close()
     * runs; the acquire that got it fails with IllegalStateException. The grant is held in flight in the backend
     * until the backend is closed, or for a second after close() cancelled the request: long enough for a close()
     * that does not wait for it to finish without it, and no longer than that for one that waits.
     */
    @Test
    void aGrantLandingWhileTheClientClosesIsReleasedBeforeTheBackendCloses() throws Exception {
        MemoryBackend backend = new MemoryBackend();
        CountDownLatch landing = new CountDownLatch(1);
        backend.confirmedAtHook = request -> {
            landing.countDown();
            AtomicReference<Long> cancelledAt = new AtomicReference<>();
            await().atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(5))
                    .until(() -> {
                        if (request.isCancelled()) {
                            cancelledAt.compareAndSet(null, System.nanoTime());
                        }
                        Long since = cancelledAt.get();
                        return backend.closeCalls.get() > 0
                                || (since != null && System.nanoTime() - since > TimeUnit.SECONDS.toNanos(1));
                    });
        };
        LockClient client = open(backend);
        CompletableFuture<Throwable> acquiring = CompletableFuture.supplyAsync(
                () -> {
                    try {
                        client.lock("k").acquire(Duration.ofSeconds(1));
                        return null;
                    } catch (Throwable t) {
                        return t;
                    }
                },
                threads);
        assertThat(landing.await(5, TimeUnit.SECONDS)).isTrue();
        client.close();

        assertThat(backend.heldAtClose)
                .as("keys still held in the store when the core closed the backend")
                .isEmpty();
        assertThat(acquiring.get(25, TimeUnit.SECONDS))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        assertThat(backend.isHeld("k")).isFalse();
        assertThat(backend.releaseCalls).hasValue(1);
        assertThat(backend.repeatedReleases).hasValue(0);
    }

    /**
     * A release decides whether the lease was lost from the state it ends, not from an earlier look: a loss reported
     * while the release waited for a renewal to finish is reported by the release, like the listeners report it.
     */
    @Test
    void aLossReportedWhileTheReleaseWaitsForARenewalIsReportedByTheRelease() throws Exception {
        MemoryBackend backend = MemoryBackend.renewing(Duration.ofSeconds(10), Duration.ofMillis(20));
        CountDownLatch renewing = blockRenewals(backend);
        LockClient client = open(backend);
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
