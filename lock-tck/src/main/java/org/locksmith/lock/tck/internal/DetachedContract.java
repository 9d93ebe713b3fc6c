package org.locksmith.lock.tck.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import java.time.Duration;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.locksmith.lock.DistributedLock;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.LockObserver;
import org.locksmith.lock.LockTimeoutException;
import org.locksmith.lock.tck.LockFaults;

/**
 * Contract 17: detached leases (owned by no thread) and async acquires. A backend sees them as ordinary requests
 * with an owner of their own; what these tests catch in a backend is a release that depends on the acquiring
 * thread, a cancelled wait left queued or granted in the store, and a close that leaves a waiting request behind.
 */
public final class DetachedContract {
    private final TckEnv env;

    public DetachedContract(TckEnv env) {
        this.env = env;
    }

    private Duration op() {
        return TckEnv.allow(env.timings().operationTimeout());
    }

    /**
     * C17.1: a detached lease is released by another thread, exactly once; until then it excludes every other
     * acquire of the key, by another client, by a thread-owned acquire of the same thread, and by another detached
     * acquire of the same client.
     */
    public void releasedByAnotherThreadOnce() throws Exception {
        LockClient a = env.client("A");
        LockClient b = env.client("B");
        String key = env.key("detached");
        DistributedLock lock = a.lock(key);
        LockLease lease = lock.acquireDetached(op());
        assertThat(lease.isValid())
                .as(env.at(a, key) + "a fresh detached lease is valid")
                .isTrue();
        assertThat(lease.holdCount())
                .as(env.at(a, key) + "hold count of a detached lease")
                .isEqualTo(1);
        assertThat(lock.isHeldByCurrentThread())
                .as(env.at(a, key) + "isHeldByCurrentThread() of the thread that acquired a detached lease")
                .isFalse();
        Probes.assertNotGrantable(env, b, key, "client A held it detached");
        assertThat(lock.tryAcquireDetached())
                .as(env.at(a, key) + "tryAcquireDetached() of the same client while its detached lease is held")
                .isEmpty();
        Optional<LockLease> owned = lock.tryAcquire();
        owned.ifPresent(LockLease::release);
        assertThat(owned)
                .as(env.at(a, key) + "tryAcquire() by the thread that acquired the detached lease (must contend, not"
                        + " re-enter)")
                .isEmpty();
        releaseOnAnotherThread(lease);
        assertThat(lease.holdCount())
                .as(env.at(a, key) + "hold count after release by another thread")
                .isZero();
        assertThat(lease.isValid())
                .as(env.at(a, key) + "a released detached lease is valid")
                .isFalse();
        assertThatThrownBy(lease::release)
                .as(env.at(a, key) + "a second release of a detached lease")
                .isInstanceOf(IllegalMonitorStateException.class);
        Probes.assertGrantable(env, b, key, "after client A's detached lease was released by another thread");
    }

    /**
     * C17.2: a detached acquire by a thread that holds the key thread-owned waits (it never re-enters), and is
     * granted once that thread releases, with a higher fencing token.
     */
    public void contendsWithTheOwningThread() throws Exception {
        LockClient a = env.client("A");
        String key = env.key("detached-vs-owned");
        DistributedLock lock = a.lock(key);
        LockLease owned = lock.acquire(op());
        long start = System.nanoTime();
        // Not assertThatThrownBy(...).as(...): when nothing is thrown, that fails before the description applies,
        // and the message would name neither the contract nor the backend.
        LockLease reentered;
        try {
            reentered = lock.acquireDetached(Duration.ofMillis(200));
        } catch (LockTimeoutException expected) {
            reentered = null;
        } catch (RuntimeException e) {
            throw new AssertionError(
                    env.at(a, key) + "acquireDetached(200 ms) by the thread holding the key thread-owned threw " + e
                            + "; expected LockTimeoutException",
                    e);
        }
        if (reentered != null) {
            reentered.release();
            fail(env.at(a, key) + "acquireDetached(200 ms) by the thread holding the key thread-owned was granted:"
                    + " a detached acquire must contend with the thread's own lease, never re-enter it; expected"
                    + " LockTimeoutException");
        }
        assertThat(TckEnv.millisSince(start))
                .as(env.at(a, key) + "acquireDetached(200 ms) gave up after (ms)")
                .isGreaterThanOrEqualTo(200);
        assertThat(owned.holdCount())
                .as(env.at(a, key) + "hold count of the thread-owned lease after the detached attempt")
                .isEqualTo(1);
        CompletableFuture<LockLease> detached = lock.acquireAsync(op());
        owned.release();
        LockLease granted = detached.get(op().toMillis(), TimeUnit.MILLISECONDS);
        try {
            if (env.has(LockFeature.FENCING)) {
                assertThat(granted.fencingToken())
                        .as(env.at(a, key) + "token of the detached lease granted after the thread-owned one")
                        .isGreaterThan(owned.fencingToken());
            }
        } finally {
            granted.release();
        }
    }

    /**
     * C17.3: an async acquire waits without blocking its caller and completes on the caller's executor once the
     * holder releases; the lease is released from yet another thread.
     */
    public void asyncCompletesOnTheExecutor() throws Exception {
        LockClient holder = env.client("H");
        LockClient w = env.client("W");
        LockClient b = env.client("B");
        String key = env.key("async");
        LockLease held = holder.lock(key).acquire(op());
        ExecutorService completion = Executors.newSingleThreadExecutor(r -> new Thread(r, "tck-completion"));
        env.closeAtEnd(completion::shutdownNow);
        long start = System.nanoTime();
        CompletableFuture<LockLease> future = w.lock(key).acquireAsync(Duration.ofSeconds(30), completion);
        assertThat(TckEnv.millisSince(start))
                .as(env.at(w, key) + "acquireAsync returned after (ms), the key being held")
                .isLessThan(op().toMillis());
        // Not waited for with get(): a thread waiting in get() may run the future's dependents itself.
        AtomicReference<String> completedOn = new AtomicReference<>();
        CountDownLatch completed = new CountDownLatch(1);
        future.whenComplete((l, e) -> {
            completedOn.set(Thread.currentThread().getName());
            completed.countDown();
        });
        Probes.quietPeriod(Duration.ofMillis(200), "the future must not complete while the key is held");
        assertThat(future.isDone())
                .as(env.at(w, key) + "acquireAsync future done 200 ms in, while another client held the key")
                .isFalse();
        held.release();
        assertThat(completed.await(op().toMillis(), TimeUnit.MILLISECONDS))
                .as(env.at(w, key) + "acquireAsync future complete within " + op().toMillis() + " ms of the release")
                .isTrue();
        LockLease lease = future.getNow(null);
        assertThat(completedOn.get())
                .as(env.at(w, key) + "thread that completed the future (must be the given executor's)")
                .isEqualTo("tck-completion");
        assertThat(lease).as(env.at(w, key) + "lease of the async acquire").isNotNull();
        assertThat(lease.isValid())
                .as(env.at(w, key) + "lease of the async acquire")
                .isTrue();
        if (env.has(LockFeature.FENCING)) {
            assertThat(lease.fencingToken())
                    .as(env.at(w, key) + "token of the async lease")
                    .isGreaterThan(held.fencingToken());
        }
        Probes.assertNotGrantable(env, b, key, "client W held it through an async acquire");
        releaseOnAnotherThread(lease);
        Probes.assertGrantable(env, b, key, "after the async lease was released by another thread");
    }

    /** C17.4: an async acquire times out with LockTimeoutException, at its deadline; zero is one attempt. */
    public void asyncTimesOut() throws Exception {
        LockClient holder = env.client("H");
        LockClient w = env.client("W");
        String key = env.key("async-timeout");
        LockLease held = holder.lock(key).acquire(op());
        long start = System.nanoTime();
        CompletableFuture<LockLease> timed = w.lock(key).acquireAsync(Duration.ofMillis(300));
        CompletableFuture<LockLease> once = w.lock(key).acquireAsync(Duration.ZERO);
        assertThat(causeOf(once, op()))
                .as(env.at(w, key) + "acquireAsync(0) of a held key")
                .isInstanceOf(LockTimeoutException.class);
        assertThat(causeOf(timed, op().plusMillis(300)))
                .as(env.at(w, key) + "acquireAsync(300 ms) of a held key")
                .isInstanceOf(LockTimeoutException.class);
        assertThat(TckEnv.millisSince(start))
                .as(env.at(w, key) + "acquireAsync(300 ms) failed after (ms)")
                .isGreaterThanOrEqualTo(300);
        held.release();
        Probes.assertGrantable(env, w, key, "after acquireAsync timed out");
    }

    /**
     * C17.5: cancelling an async acquire leaves nothing in the store: the holder's release hands the key to nobody
     * (another client's {@code tryAcquire()} right after it succeeds) and the store's entries return to what they
     * were. Then rounds whose cancel races the holder's release: whatever the race gives, the key is granted to
     * another client afterwards.
     */
    public void asyncCancelLeavesNothing() throws Exception {
        LockClient holder = env.client("H");
        LockClient w = env.client("W");
        LockClient b = env.client("B");
        String key = env.key("async-cancel");
        AtomicInteger grantsToW = new AtomicInteger();
        w.addObserver(new LockObserver() {
            @Override
            public void acquired(String backend, String k, long waitNanos, long fencingToken) {
                if (k.equals(key)) {
                    grantsToW.incrementAndGet();
                }
            }
        });
        LockLease held = holder.lock(key).acquire(op());
        OptionalInt alone = env.storeEntries(key);
        int before = alone.orElse(-1);
        CompletableFuture<LockLease> future = w.lock(key).acquireAsync(Duration.ofSeconds(30));
        Probes.awaitQueued(env, key, alone, 1, Duration.ofMillis(150), Probes.QUEUE_SETTLE, "the async waiter");
        assertThat(future.cancel(true))
                .as(env.at(w, key) + "cancel of a waiting acquireAsync")
                .isTrue();
        assertThat(future.isCancelled()).isTrue();
        if (before >= 0) {
            Awaitility.await("c17 store entries after a cancelled acquireAsync")
                    .atMost(op())
                    .pollInterval(Duration.ofMillis(20))
                    .untilAsserted(() -> assertThat(env.requireStoreEntries(key))
                            .as(env.at(w, key) + "store entries of the key, still held, after its waiting acquireAsync"
                                    + " was cancelled (" + before + " before it came)")
                            .isLessThanOrEqualTo(before));
        } else {
            Probes.quietPeriod(Duration.ofMillis(100), "no store view: the backend's cancel action ends the wait");
        }
        held.release();
        Probes.assertGrantable(env, b, key, "right after the holder released, a waiting acquireAsync cancelled");
        Probes.quietPeriod(Duration.ofMillis(200), "a request the backend kept would be granted by now");
        assertThat(grantsToW.get())
                .as(env.at(w, key) + "grants to client W after its only acquireAsync was cancelled (the store kept its"
                        + " request and granted it)")
                .isZero();
        for (int round = 0; round < 5; round++) {
            LockLease h = holder.lock(key).acquireDetached(op()); // released by another thread
            CompletableFuture<LockLease> racing = w.lock(key).acquireAsync(Duration.ofSeconds(30));
            Probes.quietPeriod(Duration.ofMillis(20 + 10 * round), "the phase of the cancel against the release");
            env.fork(() -> {
                h.release();
                return null;
            });
            racing.cancel(true);
            if (!racing.isCancelled()) {
                racing.get(op().toMillis(), TimeUnit.MILLISECONDS).release();
            }
            Probes.acquireWithin(env, b, key, op(), "after round " + round + " of a cancel racing the release")
                    .value()
                    .release();
        }
    }

    /** C17.6: closing a client fails its pending async acquires with IllegalStateException, and leaves nothing held. */
    public void closeFailsPendingFutures() throws Exception {
        LockClient holder = env.client("H");
        LockClient w = env.client("W");
        LockClient b = env.client("B");
        String key = env.key("async-close");
        LockLease held = holder.lock(key).acquire(op());
        OptionalInt alone = env.storeEntries(key);
        CompletableFuture<LockLease> pending = w.lock(key).acquireAsync(Duration.ofSeconds(60));
        Probes.awaitQueued(env, key, alone, 1, Duration.ofMillis(150), Probes.QUEUE_SETTLE, "the async waiter");
        long start = System.nanoTime();
        w.close();
        assertThat(causeOf(pending, op()))
                .as(env.at(w, key) + "a pending acquireAsync of a client that was closed")
                .isInstanceOf(IllegalStateException.class);
        assertThat(TckEnv.millisSince(start))
                .as(env.at(w, key) + "close() and the failure of the pending future took (ms)")
                .isLessThan(op().toMillis());
        assertThatThrownBy(() -> w.lock(key).acquireAsync(Duration.ofSeconds(1)))
                .as(env.at(w, key) + "acquireAsync on a closed client")
                .isInstanceOf(IllegalStateException.class);
        held.release();
        Probes.assertGrantable(env, b, key, "after the closed client's pending acquireAsync failed");
    }

    /**
     * C17.7: a detached lease reports its loss like any other: with LOSS_DETECTION, deleting its state makes it
     * invalid, fires its listener once, and its release (from another thread) throws LockLostException; without it,
     * {@code onLost} is refused. Needs fault {@code DELETE_LOCK_STATE} where LOSS_DETECTION is declared.
     */
    public void lossIsReported() throws Exception {
        LockClient a = env.client("A");
        String key = env.key("detached-lost");
        if (!env.has(LockFeature.LOSS_DETECTION)) {
            try (LockLease lease = a.lock(key).acquireDetached(op())) {
                assertThatThrownBy(() -> lease.onLost(e -> {}))
                        .as(env.at(a, key) + "onLost of a detached lease without LOSS_DETECTION")
                        .isInstanceOf(UnsupportedOperationException.class);
            }
            return;
        }
        env.requireFault(LockFaults.Fault.DELETE_LOCK_STATE);
        LockLease lease = a.lock(key).acquireDetached(op());
        AtomicInteger fired = new AtomicInteger();
        lease.onLost(e -> fired.incrementAndGet());
        env.faults().deleteLockState(key);
        Duration bound = TckEnv.allow(env.timings()
                .leaseTime()
                .plus(env.timings().sessionTimeout())
                .plus(env.timings().handoff())
                .plus(Duration.ofSeconds(1)));
        Awaitility.await("c17 loss of a detached lease")
                .atMost(bound)
                .pollInterval(Duration.ofMillis(20))
                .untilAsserted(() -> {
                    assertThat(lease.isValid())
                            .as(env.at(a, key) + "isValid() of a detached lease whose state was deleted")
                            .isFalse();
                    assertThat(fired.get())
                            .as(env.at(a, key) + "onLost calls of a detached lease whose state was deleted")
                            .isEqualTo(1);
                });
        try {
            releaseOnAnotherThread(lease);
            fail(env.at(a, key)
                    + "release of a lost detached lease returned normally; it must throw LockLostException");
        } catch (ExecutionException e) {
            assertThat(e.getCause())
                    .as(env.at(a, key) + "release of a lost detached lease")
                    .isInstanceOf(LockLostException.class);
        }
    }

    /** Releases {@code lease} on a thread of the test's own, waiting up to {@code op}; what it threw, as the cause. */
    private void releaseOnAnotherThread(LockLease lease) throws Exception {
        env.fork(() -> {
                    lease.release();
                    return null;
                })
                .get(op().toMillis(), TimeUnit.MILLISECONDS);
    }

    /** What {@code future} failed with, waiting up to {@code bound}; fails if it completed normally or not in time. */
    private static Throwable causeOf(CompletableFuture<LockLease> future, Duration bound) throws InterruptedException {
        try {
            LockLease lease = future.get(bound.toMillis(), TimeUnit.MILLISECONDS);
            lease.release();
            throw new AssertionError("completed with a lease instead of failing: " + lease);
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (TimeoutException e) {
            throw new AssertionError("not complete within " + bound.toMillis() + " ms");
        }
    }
}
