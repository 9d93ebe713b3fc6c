package org.locksmith.lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.LockBackend;

/**
 * Close and cancellation rules of the core: close fails every wait and releases concurrently, also from a
 * listener; cancel actions run apart from each other and never after the attempt returned; a lease's hold count
 * and its release by close are one state.
 */
class CoreCloseAndCancelTest {
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final List<LockClient> clients = new CopyOnWriteArrayList<>();
    private final CountDownLatch unblock = new CountDownLatch(1);

    @AfterEach
    void tearDown() {
        unblock.countDown();
        clients.forEach(LockClient::close);
        threads.shutdownNow();
    }

    private LockClient open(LockBackend backend) {
        LockClient client = Locks.client(backend);
        clients.add(client);
        return client;
    }

    private static long millisSince(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    /** A thread of {@code client} that waits for {@code key}; completes with what the wait threw, or null. */
    private CompletableFuture<Throwable> waitFor(
            LockClient client, String key, AtomicReference<Thread> thread, AtomicBoolean interruptedAfter) {
        return CompletableFuture.supplyAsync(
                () -> {
                    thread.set(Thread.currentThread());
                    try {
                        client.lock(key).acquire(Duration.ofSeconds(30));
                        return null;
                    } catch (Throwable t) {
                        interruptedAfter.set(Thread.currentThread().isInterrupted());
                        return t;
                    }
                },
                threads);
    }

    /**
     * The SPI lets a backend wait on a {@code Condition} and look at nothing but its deadline (the memory backend
     * does, in slices of a second): close() must still end that wait promptly, and leave no interrupt behind.
     */
    @Test
    void closeEndsAWaitThatRegisteredNoCancelAction() throws Exception {
        MemoryBackend backend = new MemoryBackend();
        LockClient holder = open(backend);
        LockClient client = open(backend);
        LockLease held = holder.lock("k").acquire(Duration.ofSeconds(1));
        AtomicReference<Thread> waiter = new AtomicReference<>();
        AtomicBoolean interruptedAfter = new AtomicBoolean();
        CompletableFuture<Throwable> waiting = waitFor(client, "k", waiter, interruptedAfter);
        await().atMost(Duration.ofSeconds(5)).until(() -> backend.waiters() == 1);

        long start = System.nanoTime();
        client.close();
        long closedIn = millisSince(start);
        Throwable thrown = waiting.get(20, TimeUnit.SECONDS);
        long failedIn = millisSince(start);

        assertThat(thrown).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThat(failedIn)
                .as("ms from close() to the waiter's IllegalStateException")
                .isLessThan(1000);
        assertThat(closedIn).as("ms close() took").isLessThan(1000);
        assertThat(interruptedAfter.get())
                .as("interrupt status left on the waiter by close()")
                .isFalse();
        assertThat(backend.waiters()).isZero();
        held.release();
    }

    /** Releasing N leases during a slow store costs about one release, not N of them. */
    @Test
    void closeReleasesLeasesConcurrently() throws Exception {
        MemoryBackend backend = new MemoryBackend();
        LockClient client = open(backend);
        for (int i = 0; i < 8; i++) {
            client.lock("k" + i).acquire(Duration.ofSeconds(1));
        }
        backend.releaseHook = () -> sleep(300);

        long start = System.nanoTime();
        client.close();
        long closedIn = millisSince(start);

        assertThat(closedIn)
                .as("ms to close a client holding 8 leases whose release takes 300 ms each")
                .isLessThan(1200);
        assertThat(backend.releaseCalls).hasValue(8);
        assertThat(backend.heldAtClose).isEmpty();
    }

    /** A loss listener may close the client: close() must not wait for the listener's own thread to end. */
    @Test
    void closeFromALossListenerDoesNotStall() throws Exception {
        MemoryBackend backend = new MemoryBackend();
        LockClient client = open(backend);
        LockLease lease = client.lock("k").acquire(Duration.ofSeconds(1));
        AtomicLong closedIn = new AtomicLong(-1);
        lease.onLost(e -> {
            long start = System.nanoTime();
            client.close();
            closedIn.set(millisSince(start));
        });
        backend.loseSession("k");

        await().atMost(Duration.ofSeconds(15)).until(() -> closedIn.get() >= 0);
        assertThat(closedIn.get()).as("ms close() took inside a loss listener").isLessThan(1000);
        assertThat(backend.closeCalls).hasValue(1);
    }

    /**
     * A cancel action that is slow (a statement cancel over a bad network) delays neither another waiter's
     * cancellation nor the loss notification of a lease that runs out.
     */
    @Test
    void aSlowCancelActionDelaysNoOtherCancellationNorLossNotification() throws Exception {
        MemoryBackend backend = new MemoryBackend(
                EnumSet.of(LockFeature.REENTRANT, LockFeature.LEASE_EXPIRY, LockFeature.LOSS_DETECTION),
                Duration.ofMillis(600),
                Duration.ZERO);
        backend.uninterruptible = true;
        CountDownLatch slowActionRunning = new CountDownLatch(1);
        AtomicBoolean first = new AtomicBoolean(true);
        backend.cancelHook = () -> {
            if (first.getAndSet(false)) {
                slowActionRunning.countDown();
                try {
                    unblock.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        LockClient holder = open(backend);
        LockClient client = open(backend);
        holder.lock("a").acquire(Duration.ofSeconds(1));
        holder.lock("b").acquire(Duration.ofSeconds(1));
        AtomicReference<Thread> waiterA = new AtomicReference<>();
        AtomicReference<Thread> waiterB = new AtomicReference<>();
        CompletableFuture<Throwable> onA = waitFor(client, "a", waiterA, new AtomicBoolean());
        CompletableFuture<Throwable> onB = waitFor(client, "b", waiterB, new AtomicBoolean());
        await().atMost(Duration.ofSeconds(5)).until(() -> backend.waiters() == 2);

        long leaseStart = System.nanoTime();
        LockLease expiring = client.lock("x").acquire(Duration.ofSeconds(1));
        AtomicLong heardAfter = new AtomicLong(-1);
        expiring.onLost(e -> heardAfter.set(millisSince(leaseStart)));

        waiterA.get().interrupt();
        assertThat(slowActionRunning.await(5, TimeUnit.SECONDS)).isTrue();
        long start = System.nanoTime();
        waiterB.get().interrupt();
        Throwable thrownB = onB.get(20, TimeUnit.SECONDS);
        long cancelledIn = millisSince(start);

        assertThat(thrownB).isInstanceOf(InterruptedException.class);
        assertThat(cancelledIn)
                .as("ms from interrupt to InterruptedException while another waiter's cancel action hangs")
                .isLessThan(500);
        await().atMost(Duration.ofSeconds(10)).until(() -> heardAfter.get() >= 0);
        assertThat(heardAfter.get())
                .as("ms from the grant of a 600 ms lease to its loss notification, while a cancel action hangs")
                .isLessThan(1500);

        unblock.countDown();
        assertThat(onA.get(20, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
    }

    /** A backend whose cancel action is slow and whose store answers on its own meanwhile. */
    private static final class SlowCancelBackend implements LockBackend {
        final CountDownLatch actionStarted = new CountDownLatch(1);
        final AtomicBoolean actionDone = new AtomicBoolean();

        @Override
        public String name() {
            return "slow-cancel";
        }

        @Override
        public Set<LockFeature> features() {
            return Set.of();
        }

        @Override
        public Duration leaseTime() {
            return Duration.ZERO;
        }

        @Override
        public Duration renewInterval() {
            return Duration.ZERO;
        }

        @Override
        public BackendLease acquire(AcquireRequest request) throws InterruptedException {
            request.onCancel(() -> {
                actionStarted.countDown();
                sleep(300);
                actionDone.set(true);
            });
            // The store's own answer ("not granted") arrives while the cancel action still runs.
            actionStarted.await(5, TimeUnit.SECONDS);
            return null;
        }

        @Override
        public void close() {}
    }

    /**
     * When an attempt has returned, none of its cancel actions runs any more: a statement cancel that lands after
     * the attempt returned would hit whatever the connection does next.
     */
    @Test
    void anAttemptReturnsOnlyAfterItsRunningCancelActionFinished() throws Exception {
        SlowCancelBackend backend = new SlowCancelBackend();
        LockClient client = open(backend);

        assertThat(client.lock("k").tryAcquire(Duration.ofMillis(50))).isEmpty();

        assertThat(backend.actionStarted.getCount()).isZero();
        assertThat(backend.actionDone)
                .as("the cancel action had finished when the attempt returned")
                .isTrue();
    }

    /**
     * Re-entry and release racing close(): a re-entry either happens before close() released the lease (and close
     * ends it) or fails; the hold count never goes below zero and a re-entry never revives a released lease.
     */
    @Test
    void holdCountsAndCloseAreOneState() throws Exception {
        List<String> violations = new CopyOnWriteArrayList<>();
        AtomicInteger racesLost = new AtomicInteger();
        for (int round = 0; round < 400 && violations.isEmpty(); round++) {
            MemoryBackend backend = new MemoryBackend();
            LockClient client = Locks.client(backend);
            CountDownLatch ready = new CountDownLatch(1);
            List<LockLease> seen = new ArrayList<>();
            CompletableFuture<Void> owner = CompletableFuture.runAsync(
                    () -> {
                        try {
                            LockLease outer = client.lock("k").acquire(Duration.ofSeconds(1));
                            synchronized (seen) {
                                seen.add(outer);
                            }
                            ready.countDown();
                            while (true) {
                                LockLease inner = client.lock("k").acquire(Duration.ofSeconds(1));
                                int count = inner.holdCount();
                                if (count == 1) {
                                    violations.add("a re-entry while holding returned a hold count of 1");
                                }
                                inner.release();
                            }
                        } catch (IllegalStateException | IllegalMonitorStateException e) {
                            racesLost.incrementAndGet();
                        } catch (Throwable t) {
                            violations.add("unexpected " + t);
                        }
                    },
                    threads);
            assertThat(ready.await(5, TimeUnit.SECONDS)).isTrue();
            long spin = ThreadLocalRandom.current().nextLong(20_000);
            long until = System.nanoTime() + spin;
            while (System.nanoTime() - until < 0) {
                Thread.onSpinWait();
            }
            client.close();
            owner.get(10, TimeUnit.SECONDS);
            synchronized (seen) {
                for (LockLease lease : seen) {
                    if (lease.holdCount() != 0) {
                        violations.add("hold count " + lease.holdCount() + " after close");
                    }
                }
            }
            if (backend.releaseCalls.get() != 1) {
                violations.add(backend.releaseCalls.get() + " releases in the store");
            }
        }
        assertThat(violations).isEmpty();
        assertThat(racesLost.get()).isPositive();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
