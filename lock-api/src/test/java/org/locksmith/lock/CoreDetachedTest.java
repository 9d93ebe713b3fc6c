package org.locksmith.lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * What the core alone decides for detached leases and async acquires (issue 19): what the TCK's c17 does not reach
 * with a correct backend. The TCK checks the rest on every backend.
 */
class CoreDetachedTest {

    /**
     * A detached lease acquired by a thread that then ends is not "abandoned": it belongs to no thread, and the
     * renewer keeps it, where it releases a thread-owned lease of a dead thread.
     */
    @Test
    void aDetachedLeaseOutlivesTheThreadThatAcquiredIt() throws Exception {
        MemoryBackend store = new MemoryBackend(
                EnumSet.of(LockFeature.REENTRANT, LockFeature.LEASE_EXPIRY, LockFeature.AUTO_RENEWAL),
                Duration.ofMillis(300),
                Duration.ofMillis(100));
        try (LockClient c = Locks.client(store)) {
            AtomicReference<LockLease> handedOver = new AtomicReference<>();
            Thread acquirer = new Thread(() -> {
                try {
                    handedOver.set(c.lock("k").acquireDetached(Duration.ofSeconds(1)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            acquirer.start();
            acquirer.join(5000);
            LockLease lease = handedOver.get();
            assertThat(lease).isNotNull();
            int renewals = store.renewCalls.get();
            await().atMost(Duration.ofSeconds(3)).until(() -> store.renewCalls.get() >= renewals + 5);
            assertThat(lease.isValid())
                    .as("a detached lease whose acquiring thread ended")
                    .isTrue();
            assertThat(store.isHeld("k")).isTrue();
            lease.release();
            assertThat(store.isHeld("k")).isFalse();
        }
    }

    /** Re-entry is by thread: a detached lease is never re-entered, and never re-enters the thread's own lease. */
    @Test
    void aDetachedAcquireNeitherReentersNorIsReentered() throws Exception {
        try (LockClient c = Locks.client(new MemoryBackend())) {
            DistributedLock lock = c.lock("k");
            LockLease detached = lock.acquireDetached(Duration.ofSeconds(1));
            assertThat(lock.tryAcquire())
                    .as("the acquiring thread's tryAcquire()")
                    .isEmpty();
            assertThat(lock.tryAcquireDetached()).as("a second detached try").isEmpty();
            assertThat(detached.holdCount()).isEqualTo(1);
            detached.release();
            try (LockLease owned = lock.acquire(Duration.ofSeconds(1))) {
                assertThat(lock.tryAcquireDetached())
                        .as("a detached try while the thread holds it")
                        .isEmpty();
                assertThat(owned.holdCount()).isEqualTo(1);
            }
        }
    }

    /** A lease that arrives for a future the caller completed itself is released: nobody else holds it. */
    @Test
    void aLeaseForAFutureCompletedMeanwhileIsReleased() throws Exception {
        MemoryBackend store = new MemoryBackend();
        try (LockClient c = Locks.client(store)) {
            LockLease held = c.lock("k").acquireDetached(Duration.ofSeconds(1));
            CompletableFuture<LockLease> future = c.lock("k").acquireAsync(Duration.ofSeconds(10));
            await().atMost(Duration.ofSeconds(3)).until(() -> store.acquireCalls.get() == 2); // it waits in the store
            future.completeExceptionally(new IllegalStateException("the caller gave up"));
            held.release();
            await().atMost(Duration.ofSeconds(3)).until(() -> store.releaseCalls.get() == 2);
            assertThat(store.isHeld("k")).isFalse();
        }
    }

    /** An executor that refuses the completion: the lease is released and the future fails with the refusal. */
    @Test
    void aRejectingExecutorFailsTheFutureAndReleasesTheLease() throws Exception {
        MemoryBackend store = new MemoryBackend();
        try (LockClient c = Locks.client(store)) {
            CompletableFuture<LockLease> future = c.lock("k").acquireAsync(Duration.ofSeconds(1), task -> {
                throw new RejectedExecutionException("shut down");
            });
            assertThatThrownBy(() -> future.get(5, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(RejectedExecutionException.class);
            await().atMost(Duration.ofSeconds(3)).until(() -> store.releaseCalls.get() == 1);
            assertThat(store.isHeld("k")).isFalse();
        }
    }

    /** Bad input fails before anything starts. */
    @Test
    void badArgumentsFailAtOnce() {
        try (LockClient c = Locks.client(new MemoryBackend())) {
            DistributedLock lock = c.lock("k");
            assertThatThrownBy(() -> lock.acquireAsync(null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> lock.acquireAsync(Duration.ofSeconds(-1)))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> lock.acquireAsync(Duration.ofSeconds(1), null))
                    .isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> lock.acquireDetached(Duration.ofSeconds(-1)))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    /**
     * close() fails a future whose lease the store granted but whose completion still waits for a busy executor:
     * it never completes normally with the lease close() released, and that lease is released in the store once.
     */
    @Test
    void closeFailsAFutureWhoseCompletionIsQueued() throws Exception {
        MemoryBackend store = new MemoryBackend();
        ExecutorService busy = Executors.newSingleThreadExecutor();
        CountDownLatch gate = new CountDownLatch(1);
        try {
            busy.execute(() -> {
                try {
                    gate.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            CountDownLatch granted = new CountDownLatch(2);
            LockClient c = Locks.client(store);
            c.addObserver(new LockObserver() {
                @Override
                public void acquired(String backend, String key, long waitNanos, long fencingToken) {
                    granted.countDown();
                }
            });
            LockLease held = c.lock("k").acquireDetached(Duration.ofSeconds(1));
            CompletableFuture<LockLease> future = c.lock("k").acquireAsync(Duration.ofSeconds(10), busy);
            held.release();
            assertThat(granted.await(5, TimeUnit.SECONDS))
                    .as("the async acquire was granted")
                    .isTrue();
            assertThat(future).isNotDone();
            c.close();
            gate.countDown();
            assertThatThrownBy(() -> future.get(5, TimeUnit.SECONDS))
                    .as("the future of an acquireAsync pending when its client closed")
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(IllegalStateException.class);
            await().atMost(Duration.ofSeconds(3)).until(() -> store.releaseCalls.get() == 2);
            assertThat(store.isHeld("k")).isFalse();
            assertThat(store.repeatedReleases.get())
                    .as("releases of one lease in the store")
                    .isZero();
        } finally {
            gate.countDown();
            busy.shutdownNow();
        }
    }
}
