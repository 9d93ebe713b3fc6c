package org.locksmith.lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * How long the core trusts a lease (issue 13): session-bound leases are bounded by their session, every bound
 * loses a drift margin, a backend cannot claim a confirmation after its grant returned, and a lease whose owner
 * thread died is released rather than renewed forever.
 */
class CoreValidityTest {

    private static MemoryBackend sessionBound(Duration session, Duration checkEvery) {
        MemoryBackend b = new MemoryBackend(
                EnumSet.of(LockFeature.REENTRANT, LockFeature.SESSION_BOUND, LockFeature.LOSS_DETECTION),
                Duration.ZERO,
                checkEvery);
        b.sessionTimeout = session;
        return b;
    }

    private static MemoryBackend leased(Duration lease, Duration renewEvery) {
        EnumSet<LockFeature> features =
                EnumSet.of(LockFeature.REENTRANT, LockFeature.LEASE_EXPIRY, LockFeature.LOSS_DETECTION);
        if (!renewEvery.isZero()) {
            features.add(LockFeature.AUTO_RENEWAL);
        }
        return new MemoryBackend(features, lease, renewEvery);
    }

    /**
     * The ZooKeeper defect: a holder whose whole process stops (GC, SIGSTOP) past its session resumes believing it
     * holds, because nothing reported the loss yet. Here the renewer is stuck in a round trip (as it would be in a
     * paused process) and the backend never reports a loss: the lease must still turn invalid once its session can
     * have expired.
     */
    @Test
    void aSessionBoundLeaseTurnsInvalidOnceItsSessionCanHaveExpiredUnconfirmed() throws Exception {
        MemoryBackend store = sessionBound(Duration.ofMillis(400), Duration.ofMillis(100));
        try (LockClient c = Locks.client(store)) {
            LockLease lease = c.lock("k").acquire(Duration.ofSeconds(1));
            List<LockLostException> causes = new CopyOnWriteArrayList<>();
            lease.onLost(causes::add);
            await().atMost(Duration.ofSeconds(5)).until(() -> store.renewCalls.get() >= 5);
            assertThat(lease.isValid())
                    .as("confirmed by its session check rounds, the lease stays valid past its session timeout")
                    .isTrue();
            CountDownLatch resume = new CountDownLatch(1);
            store.renewHook = () -> {
                try {
                    resume.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            };
            long stuckAt = System.nanoTime();
            try {
                await().atMost(Duration.ofSeconds(3)).until(() -> !lease.isValid());
                long invalidAfterMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stuckAt);
                assertThat(invalidAfterMs)
                        .as("invalid at most one session timeout after the last proof of the session")
                        .isLessThan(400 + 100 + 300);
            } finally {
                resume.countDown();
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> causes.size() == 1);
            assertThat(causes.get(0)).hasMessageContaining("key 'k'");
            assertThatThrownBy(lease::release).isInstanceOf(LockLostException.class);
        }
    }

    @Test
    void aSessionTimeoutWithoutSessionChecksIsRejectedWhenTheClientIsBuilt() {
        MemoryBackend unchecked = sessionBound(Duration.ofSeconds(1), Duration.ZERO);
        assertThatThrownBy(() -> Locks.client(unchecked))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("sessionTimeout()")
                .hasMessageContaining("renewInterval()");
        MemoryBackend tooRare = sessionBound(Duration.ofSeconds(1), Duration.ofSeconds(1));
        assertThatThrownBy(() -> Locks.client(tooRare))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("sessionTimeout()");
        MemoryBackend negative = sessionBound(Duration.ofSeconds(-1), Duration.ofMillis(100));
        assertThatThrownBy(() -> Locks.client(negative))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("sessionTimeout()");
    }

    /**
     * Validity ends a drift margin (1% of the lease plus 2 ms) before {@code confirmedAt + leaseTime}: the store's
     * clock may run faster than ours, and Redis, for one, expires keys on its own tick.
     */
    @Test
    void validityEndsADriftMarginBeforeTheLeaseTime() throws Exception {
        MemoryBackend store = leased(Duration.ofMillis(2000), Duration.ZERO);
        try (LockClient c = Locks.client(store)) {
            long before = System.nanoTime();
            LockLease lease = c.lock("k").acquire(Duration.ofSeconds(1));
            long firstInvalid;
            do {
                firstInvalid = System.nanoTime();
            } while (lease.isValid() && firstInvalid - before < TimeUnit.SECONDS.toNanos(5));
            long validMs = TimeUnit.NANOSECONDS.toMillis(firstInvalid - before);
            // The margin of a 2000 ms lease is 22 ms; the bound leaves 10 ms for this loop's scheduling.
            assertThat(validMs)
                    .as("a 2000 ms lease must turn invalid a margin before 2000 ms")
                    .isBetween(1900L, 1988L);
        }
    }

    /** A backend that claims a confirmation later than the grant returned would stretch validity; it is clamped. */
    @Test
    void aConfirmationLaterThanTheGrantIsClampedToTheGrant() throws Exception {
        MemoryBackend store = leased(Duration.ofMillis(300), Duration.ZERO);
        store.confirmedAtShiftNanos = TimeUnit.SECONDS.toNanos(30);
        try (LockClient c = Locks.client(store)) {
            long before = System.nanoTime();
            LockLease lease = c.lock("k").acquire(Duration.ofSeconds(1));
            await().atMost(Duration.ofSeconds(3)).until(() -> !lease.isValid());
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - before))
                    .isLessThan(1000);
        }
    }

    /**
     * A thread that dies holding a lease (an exception outside try-with-resources, a pool thread replaced) must not
     * keep the key locked for every process until the client closes: the renewer releases it and reports it lost.
     */
    @Test
    void aLeaseWhoseOwnerThreadDiedIsReleasedAndReportedLost() throws Exception {
        MemoryBackend store = leased(Duration.ofMillis(300), Duration.ofMillis(100));
        try (LockClient c = Locks.client(store)) {
            AtomicReference<LockLease> leaked = new AtomicReference<>();
            List<LockLostException> causes = new CopyOnWriteArrayList<>();
            Thread owner = new Thread(
                    () -> {
                        try {
                            LockLease lease = c.lock("k").acquire(Duration.ofSeconds(1));
                            lease.onLost(causes::add);
                            leaked.set(lease);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    },
                    "dies-holding-k");
            owner.start();
            owner.join(5000);
            assertThat(leaked.get()).isNotNull();
            await().atMost(Duration.ofSeconds(3)).until(() -> !store.isHeld("k"));
            await().atMost(Duration.ofSeconds(3)).until(() -> causes.size() == 1);
            assertThat(causes.get(0)).hasMessageContaining("'dies-holding-k'").hasMessageContaining("key 'k'");
            assertThat(leaked.get().isValid()).isFalse();
            // The key is free for others, in this client too.
            try (LockLease next = c.lock("k").tryAcquire().orElseThrow()) {
                assertThat(next.isValid()).isTrue();
            }
        }
    }

    /**
     * A backend that cannot prove a lease for a while, without having lost it (a dropped connection within the
     * session), suspends it: invalid meanwhile, no loss reported, valid again when the backend resumes it.
     */
    @Test
    void aSuspendedLeaseIsInvalidUntilTheBackendResumesIt() throws Exception {
        MemoryBackend store = sessionBound(Duration.ofSeconds(30), Duration.ofSeconds(10));
        try (LockClient c = Locks.client(store)) {
            LockLease lease = c.lock("k").acquire(Duration.ofSeconds(1));
            List<LockLostException> causes = new CopyOnWriteArrayList<>();
            lease.onLost(causes::add);
            store.suspendedKeys.add("k");
            assertThat(lease.isValid()).isFalse();
            assertThat(c.lock("k").isHeldByCurrentThread()).isFalse();
            store.suspendedKeys.remove("k");
            assertThat(lease.isValid()).isTrue();
            assertThat(causes).isEmpty();
            lease.release();
        }
    }

    /**
     * A session-bound lease whose session checks failed for longer than its session is lost, and its owner is told;
     * but the session may well have survived (the ZooKeeper case: a server restart under load), and then the store
     * keeps the lock for as long as the session lives, blocking every other client until the owner releases. The
     * core releases such a lease in the store at once, once; the owner's release() only reports the loss. A leased
     * store frees a lost lease by itself when its lease runs out, so the core leaves those to the store (the TCK's
     * expiry contracts must see the store do it).
     */
    @Test
    void aSessionBoundLeaseThatRanOutIsReleasedInTheStoreBeforeItsOwnerReleasesIt() throws Exception {
        MemoryBackend store = sessionBound(Duration.ofMillis(400), Duration.ofMillis(100));
        try (LockClient c = Locks.client(store)) {
            LockLease lease = c.lock("k").acquire(Duration.ofSeconds(1));
            store.storeDown = true; // session checks fail; the store itself keeps the lock
            await().atMost(Duration.ofSeconds(3)).until(() -> !lease.isValid());
            store.storeDown = false;
            await().atMost(Duration.ofSeconds(3))
                    .alias("the store was told before the owner released")
                    .until(() -> store.releaseCalls.get() == 1);
            assertThat(onOtherThread(() -> {
                        var other = c.lock("k").tryAcquire();
                        other.ifPresent(LockLease::release);
                        return other.isPresent();
                    }))
                    .as("another thread is granted the key before the lost lease's owner released it")
                    .isTrue();
            assertThatThrownBy(lease::release).isInstanceOf(LockLostException.class);
            assertThat(store.releaseCalls.get())
                    .as("the lost lease is released in the store once")
                    .isEqualTo(2);
            assertThat(store.repeatedReleases.get()).isZero();
        }

        MemoryBackend leased = leased(Duration.ofMillis(400), Duration.ofMillis(100));
        try (LockClient c = Locks.client(leased)) {
            LockLease lease = c.lock("k").acquire(Duration.ofSeconds(1));
            leased.storeDown = true;
            await().atMost(Duration.ofSeconds(3)).until(() -> !lease.isValid());
            // a background release would come within this window
            await().alias("a leased store's lost lease is left to the store's own expiry")
                    .during(Duration.ofMillis(300))
                    .atMost(Duration.ofSeconds(1))
                    .until(() -> leased.releaseCalls.get() == 0);
            leased.storeDown = false;
            assertThatThrownBy(lease::release).isInstanceOf(LockLostException.class);
        }
    }

    private static <T> T onOtherThread(java.util.concurrent.Callable<T> task) throws Exception {
        java.util.concurrent.FutureTask<T> f = new java.util.concurrent.FutureTask<>(task);
        new Thread(f, "other").start();
        return f.get(5, TimeUnit.SECONDS);
    }
}
