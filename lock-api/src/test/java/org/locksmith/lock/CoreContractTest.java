package org.locksmith.lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The shared core's own contract, against an in-memory backend that counts the core's calls. */
class CoreContractTest {
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final MemoryBackend backend = new MemoryBackend();
    private final LockClient client = Locks.client(backend);

    @AfterEach
    void tearDown() {
        client.close();
        threads.shutdownNow();
    }

    @Test
    void reentryCostsNoRoundTripAndNeedsOneReleasePerAcquire() throws Exception {
        DistributedLock lock = client.lock("k");
        LockLease first = lock.acquire(Duration.ofSeconds(1));
        LockLease second = lock.acquire(Duration.ofSeconds(1));
        LockLease third = lock.tryAcquire().orElseThrow();
        assertThat(second).isSameAs(first);
        assertThat(third).isSameAs(first);
        assertThat(first.holdCount()).isEqualTo(3);
        assertThat(backend.acquireCalls).hasValue(1);

        first.release();
        second.release();
        assertThat(backend.releaseCalls).hasValue(0);
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        third.release();
        assertThat(backend.releaseCalls).hasValue(1);
        assertThat(first.holdCount()).isZero();
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertThatThrownBy(first::release).isInstanceOf(IllegalMonitorStateException.class);
    }

    @Test
    void releaseByAnotherThreadIsRejectedAndTheLockStaysHeld() throws Exception {
        LockLease lease = client.lock("k").acquire(Duration.ofSeconds(1));
        Future<?> other = threads.submit(lease::release);
        assertThatThrownBy(other::get).hasCauseInstanceOf(IllegalMonitorStateException.class);
        assertThat(lease.isValid()).isTrue();
        assertThat(backend.isHeld("k")).isTrue();
        lease.release();
    }

    @Test
    void threadsOfOneClientExcludeEachOther() throws Exception {
        LockLease lease = client.lock("k").acquire(Duration.ofSeconds(1));
        Future<Optional<LockLease>> other =
                threads.submit(() -> client.lock("k").tryAcquire());
        assertThat(other.get()).isEmpty();
        lease.release();
        Future<Boolean> later = threads.submit(() -> {
            try (LockLease l = client.lock("k").acquire(Duration.ofSeconds(1))) {
                return l.isValid();
            }
        });
        assertThat(later.get()).isTrue();
    }

    @Test
    void timedAcquireGivesUpNoEarlierThanAskedAndLeavesNoWaiter() throws Exception {
        LockLease lease = client.lock("k").acquire(Duration.ofSeconds(1));
        Future<Long> waited = threads.submit(() -> {
            long start = System.nanoTime();
            assertThatThrownBy(() -> client.lock("k").acquire(Duration.ofMillis(200)))
                    .isInstanceOf(LockTimeoutException.class)
                    .hasMessageContaining("'k'");
            return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        });
        assertThat(waited.get()).isBetween(200L, 1000L);
        assertThat(backend.waiters()).isZero();
        lease.release();
    }

    @Test
    void interruptedWaiterThrowsPromptlyAndLeavesNothingBehind() throws Exception {
        assertInterruptIsPrompt();
    }

    @Test
    void interruptReachesAWaiterBlockedInAnUninterruptibleStoreCall() throws Exception {
        backend.uninterruptible = true;
        assertInterruptIsPrompt();
    }

    private void assertInterruptIsPrompt() throws Exception {
        LockLease lease = client.lock("k").acquire(Duration.ofSeconds(1));
        AtomicReference<Thread> waiter = new AtomicReference<>();
        CountDownLatch started = new CountDownLatch(1);
        Future<Throwable> outcome = threads.submit(() -> {
            waiter.set(Thread.currentThread());
            started.countDown();
            try {
                client.lock("k").acquire(Duration.ofSeconds(30));
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
        started.await();
        await().atMost(Duration.ofSeconds(5)).until(() -> backend.waiters() == 1);
        long start = System.nanoTime();
        waiter.get().interrupt();
        assertThat(outcome.get(5, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(500);
        assertThat(backend.waiters()).isZero();
        lease.release();
        assertThat(backend.isHeld("k")).isFalse();
    }

    @Test
    void interruptStatusBeforeAcquireFailsWithoutIo() {
        Thread.currentThread().interrupt();
        assertThatThrownBy(() -> client.lock("k").acquire(Duration.ofSeconds(1)))
                .isInstanceOf(InterruptedException.class);
        assertThat(Thread.interrupted()).isFalse();
        assertThat(backend.acquireCalls).hasValue(0);
    }

    @Test
    void reentryHonoursAPendingInterruptWithoutIoButTryAcquireDoesNotLookAtIt() throws Exception {
        DistributedLock lock = client.lock("k");
        LockLease lease = lock.acquire(Duration.ofSeconds(1));
        Thread.currentThread().interrupt();
        assertThatThrownBy(() -> lock.acquire(Duration.ofSeconds(1))).isInstanceOf(InterruptedException.class);
        assertThat(Thread.interrupted())
                .as("interrupt status after the InterruptedException")
                .isFalse();
        Thread.currentThread().interrupt();
        assertThatThrownBy(lock::acquire).isInstanceOf(InterruptedException.class);
        Thread.currentThread().interrupt();
        assertThatThrownBy(() -> lock.tryAcquire(Duration.ofMillis(10))).isInstanceOf(InterruptedException.class);
        Thread.currentThread().interrupt();
        assertThatThrownBy(() -> lock.acquire(Duration.ZERO)).isInstanceOf(InterruptedException.class);
        assertThat(Thread.interrupted()).isFalse();
        assertThat(lease.holdCount()).isEqualTo(1);

        // Like Lock.tryLock(): no interruption check; the status stays set.
        Thread.currentThread().interrupt();
        try {
            assertThat(lock.tryAcquire()).containsSame(lease);
        } finally {
            assertThat(Thread.interrupted()).isTrue();
        }
        assertThat(lease.holdCount()).isEqualTo(2);
        lease.release();
        lease.release();
        assertThat(backend.acquireCalls).hasValue(1);
    }

    @Test
    void aZeroTimeoutHonoursAPendingInterruptWithoutIo() {
        Thread.currentThread().interrupt();
        assertThatThrownBy(() -> client.lock("k").acquire(Duration.ZERO)).isInstanceOf(InterruptedException.class);
        Thread.currentThread().interrupt();
        assertThatThrownBy(() -> client.lock("k").tryAcquire(Duration.ZERO)).isInstanceOf(InterruptedException.class);
        assertThat(Thread.interrupted()).isFalse();
        assertThat(backend.acquireCalls).hasValue(0);
    }

    @Test
    void inconsistentBackendDeclarationsAreRejectedWhenTheClientIsBuilt() {
        assertRejected(
                new MemoryBackend(EnumSet.of(LockFeature.AUTO_RENEWAL), Duration.ofSeconds(3), Duration.ZERO),
                "AUTO_RENEWAL",
                "renewInterval()");
        assertRejected(
                new MemoryBackend(
                        EnumSet.of(LockFeature.LEASE_EXPIRY, LockFeature.AUTO_RENEWAL),
                        Duration.ofSeconds(3),
                        Duration.ofSeconds(3)),
                "renewInterval()",
                "leaseTime()");
        assertRejected(
                new MemoryBackend(EnumSet.of(LockFeature.LEASE_EXPIRY), Duration.ZERO, Duration.ZERO),
                "LEASE_EXPIRY",
                "leaseTime()");
        assertRejected(
                new MemoryBackend(EnumSet.noneOf(LockFeature.class), Duration.ofMillis(-1), Duration.ZERO),
                "leaseTime()",
                "negative");
        assertRejected(new MemoryBackend(EnumSet.noneOf(LockFeature.class), Duration.ZERO, null), "renewInterval()");

        // A session-bound backend may check its sessions without leases that expire.
        MemoryBackend sessions =
                new MemoryBackend(EnumSet.of(LockFeature.SESSION_BOUND), Duration.ZERO, Duration.ofSeconds(1));
        Locks.client(sessions).close();
        assertThat(sessions.closeCalls).hasValue(1);
    }

    private static void assertRejected(MemoryBackend backend, String... inMessage) {
        assertThatThrownBy(() -> Locks.client(backend))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'memory'")
                .hasMessageContaining(MemoryBackend.class.getName())
                .message()
                .contains(inMessage);
        assertThat(backend.closeCalls).as("the rejected backend is closed").hasValue(1);
    }

    @Test
    void badArgumentsFailBeforeAnyIo() {
        assertThatThrownBy(() -> client.lock(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> client.lock("")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> client.lock("x".repeat(Locks.MAX_KEY_LENGTH + 1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1024");
        assertThatThrownBy(() -> client.lock("a\uD800b"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("surrogate");
        assertThatThrownBy(() -> client.lock("a\uDC00")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> client.lock("k").acquire(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> client.lock("k").acquire(null)).isInstanceOf(NullPointerException.class);
        assertThat(client.lock("x".repeat(Locks.MAX_KEY_LENGTH)).key()).hasSize(Locks.MAX_KEY_LENGTH);
        assertThat(client.lock("\uD83D\uDD12 lock").key()).isNotEmpty();
        assertThat(backend.acquireCalls).hasValue(0);
    }

    @Test
    void fencingTokensComeFromTheBackendAndRise() throws Exception {
        long first;
        try (LockLease lease = client.lock("k").acquire(Duration.ofSeconds(1))) {
            first = lease.fencingToken();
        }
        try (LockLease lease = client.lock("k").acquire(Duration.ofSeconds(1))) {
            assertThat(lease.fencingToken()).isGreaterThan(first);
        }
    }

    @Test
    void undeclaredFeaturesFailClearly() throws Exception {
        try (LockClient plain =
                Locks.client(new MemoryBackend(EnumSet.noneOf(LockFeature.class), Duration.ZERO, Duration.ZERO))) {
            LockLease lease = plain.lock("k").acquire(Duration.ofSeconds(1));
            assertThatThrownBy(lease::fencingToken)
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("FENCING");
            assertThatThrownBy(() -> lease.onLost(e -> {}))
                    .as("a listener that nothing would ever call")
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("LOSS_DETECTION");
            assertThatThrownBy(() -> plain.lock("k").acquire(Duration.ofSeconds(1)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("REENTRANT");
            lease.release();
        }
    }

    @Test
    void lostLeaseTurnsInvalidFiresListenersOnceAndReleaseReportsIt() throws Exception {
        LockLease lease = client.lock("k").acquire(Duration.ofSeconds(1));
        AtomicInteger fired = new AtomicInteger();
        lease.onLost(e -> fired.incrementAndGet());
        backend.loseSession("k");
        await().atMost(Duration.ofSeconds(5)).until(() -> fired.get() == 1);
        assertThat(lease.isValid()).isFalse();
        assertThat(client.lock("k").isHeldByCurrentThread()).isFalse();
        AtomicInteger late = new AtomicInteger();
        lease.onLost(e -> late.incrementAndGet());
        assertThat(late).hasValue(1);
        assertThatThrownBy(() -> client.lock("k").acquire(Duration.ofSeconds(1)))
                .isInstanceOf(LockLostException.class);
        assertThatThrownBy(lease::release).isInstanceOf(LockLostException.class);
        assertThat(fired).hasValue(1);
        assertThat(lease.holdCount()).isZero();
    }

    @Test
    void renewalKeepsALeaseAliveAndARefusedRenewalLosesIt() throws Exception {
        MemoryBackend leased = new MemoryBackend(
                EnumSet.of(
                        LockFeature.REENTRANT,
                        LockFeature.LEASE_EXPIRY,
                        LockFeature.AUTO_RENEWAL,
                        LockFeature.LOSS_DETECTION),
                Duration.ofMillis(300),
                Duration.ofMillis(100));
        try (LockClient c = Locks.client(leased)) {
            LockLease lease = c.lock("k").acquire(Duration.ofSeconds(1));
            CountDownLatch lost = new CountDownLatch(1);
            lease.onLost(e -> lost.countDown());
            await().atMost(Duration.ofSeconds(5)).until(() -> leased.renewCalls.get() >= 8);
            assertThat(lease.isValid()).isTrue();
            leased.refuseRenewals = true;
            assertThat(lost.await(5, TimeUnit.SECONDS)).isTrue();
            assertThat(lease.isValid()).isFalse();
            assertThatThrownBy(lease::release).isInstanceOf(LockLostException.class);
        }
    }

    @Test
    void aLeaseThatCannotBeRenewedTurnsInvalidWhenItsTimeRunsOut() throws Exception {
        MemoryBackend leased = new MemoryBackend(
                EnumSet.of(
                        LockFeature.REENTRANT,
                        LockFeature.LEASE_EXPIRY,
                        LockFeature.AUTO_RENEWAL,
                        LockFeature.LOSS_DETECTION),
                Duration.ofMillis(300),
                Duration.ofMillis(100));
        try (LockClient c = Locks.client(leased)) {
            LockLease lease = c.lock("k").acquire(Duration.ofSeconds(1));
            List<LockLostException> causes = new CopyOnWriteArrayList<>();
            lease.onLost(causes::add);
            leased.storeDown = true;
            await().atMost(Duration.ofSeconds(5)).until(() -> !lease.isValid());
            await().atMost(Duration.ofSeconds(5)).until(() -> causes.size() == 1);
            assertThat(causes.get(0)).hasMessageContaining("ran out");
        }
    }

    @Test
    void anUnrenewedLeaseIsReportedLostOnceWhenItsTimeRunsOut() throws Exception {
        MemoryBackend leased = new MemoryBackend(
                EnumSet.of(LockFeature.REENTRANT, LockFeature.LEASE_EXPIRY, LockFeature.LOSS_DETECTION),
                Duration.ofMillis(200),
                Duration.ZERO);
        try (LockClient c = Locks.client(leased)) {
            long start = System.nanoTime();
            LockLease lease = c.lock("k").acquire(Duration.ofSeconds(1));
            List<LockLostException> causes = new CopyOnWriteArrayList<>();
            List<Long> heardAfterMillis = new CopyOnWriteArrayList<>();
            lease.onLost(e -> {
                heardAfterMillis.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
                causes.add(e);
            });
            await().atMost(Duration.ofSeconds(5)).until(() -> causes.size() == 1);
            assertThat(heardAfterMillis.get(0))
                    .as("listener called this long after the acquire of a 200 ms lease (less its 4 ms drift margin)")
                    .isBetween(196L, 1000L);
            assertThat(causes.get(0)).hasMessageContaining("ran out");
            assertThat(lease.isValid()).isFalse();
            assertThatThrownBy(lease::release).isInstanceOf(LockLostException.class);
            assertThat(causes).hasSize(1);
            assertThat(leased.renewCalls).hasValue(0);
        }
    }

    @Test
    void closeReleasesLeasesFailsWaitersAndStopsThreads() throws Exception {
        MemoryBackend own = new MemoryBackend(
                EnumSet.of(LockFeature.REENTRANT, LockFeature.AUTO_RENEWAL, LockFeature.LEASE_EXPIRY),
                Duration.ofSeconds(3),
                Duration.ofSeconds(1));
        own.uninterruptible = true;
        LockClient c = Locks.client(own);
        LockLease lease = c.lock("k").acquire(Duration.ofSeconds(1));
        CompletableFuture<Throwable> waiter = CompletableFuture.supplyAsync(
                () -> {
                    try {
                        c.lock("k").acquire(Duration.ofSeconds(30));
                        return null;
                    } catch (Throwable t) {
                        return t;
                    }
                },
                threads);
        await().atMost(Duration.ofSeconds(5)).until(() -> own.waiters() == 1);
        long start = System.nanoTime();
        c.close();
        assertThat(waiter.get(5, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(2000);
        assertThat(own.isHeld("k")).isFalse();
        assertThat(own.closeCalls).hasValue(1);
        assertThat(lease.isValid()).isFalse();
        assertThatThrownBy(lease::release).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> c.lock("k")).isInstanceOf(IllegalStateException.class);
        await().atMost(Duration.ofSeconds(5))
                .until(() -> Thread.getAllStackTraces().keySet().stream()
                        .noneMatch(t -> t.getName().startsWith("locksmith-") && t.isAlive()));
        c.close(); // idempotent
        assertThat(own.closeCalls).hasValue(1);
    }

    @Test
    void asLockIsAThreadOwnedReentrantJucLock() throws Exception {
        Lock juc = client.lock("k").asLock();
        juc.lock();
        assertThat(juc.tryLock()).isTrue();
        assertThat(client.lock("k").isHeldByCurrentThread()).isTrue();
        Future<Boolean> other = threads.submit(() -> juc.tryLock(50, TimeUnit.MILLISECONDS));
        assertThat(other.get()).isFalse();
        Future<?> wrongUnlock = threads.submit(juc::unlock);
        assertThatThrownBy(wrongUnlock::get).hasCauseInstanceOf(IllegalMonitorStateException.class);
        juc.unlock();
        juc.unlock();
        assertThatThrownBy(juc::unlock).isInstanceOf(IllegalMonitorStateException.class);
        assertThatThrownBy(juc::newCondition).isInstanceOf(UnsupportedOperationException.class);
        assertThat(backend.acquireCalls)
                .as("one for the holder, one for the other thread's attempt")
                .hasValue(2);
    }

    @Test
    void jucUnlockOfALostLeaseReportsTheLossAndReleasesTheHold() throws Exception {
        Lock juc = client.lock("k").asLock();
        juc.lock();
        backend.loseSession("k");
        assertThatThrownBy(juc::unlock).isInstanceOf(LockLostException.class);
        assertThat(client.lock("k").isHeldByCurrentThread()).isFalse();
        assertThatThrownBy(juc::unlock).isInstanceOf(IllegalMonitorStateException.class);
        assertThat(juc.tryLock()).isTrue();
        juc.unlock();
    }

    @Test
    void jucUnlockAfterCloseSaysTheClientWasClosed() throws Exception {
        Lock juc = client.lock("k").asLock();
        juc.lock();
        client.close();
        assertThatThrownBy(juc::unlock)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        assertThat(backend.isHeld("k")).isFalse();
    }

    @Test
    void jucLockWaitsUninterruptiblyAndKeepsTheInterruptStatus() throws Exception {
        LockLease lease = client.lock("k").acquire(Duration.ofSeconds(1));
        AtomicReference<Thread> waiter = new AtomicReference<>();
        Future<Boolean> locked = threads.submit(() -> {
            waiter.set(Thread.currentThread());
            Lock juc = client.lock("k").asLock();
            juc.lock();
            boolean interrupted = Thread.currentThread().isInterrupted();
            juc.unlock();
            return interrupted;
        });
        await().atMost(Duration.ofSeconds(5)).until(() -> backend.waiters() == 1);
        waiter.get().interrupt();
        await().atMost(Duration.ofSeconds(5)).until(() -> backend.waiters() == 1 && backend.acquireCalls.get() >= 3);
        lease.release();
        assertThat(locked.get(5, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void twoClientsAreTwoOwners() throws Exception {
        try (LockClient second = Locks.client(backend)) {
            LockLease lease = client.lock("k").acquire(Duration.ofSeconds(1));
            assertThat(second.lock("k").tryAcquire()).isEmpty();
            lease.release();
            assertThat(second.lock("k").tryAcquire()).isPresent();
        }
    }
}
