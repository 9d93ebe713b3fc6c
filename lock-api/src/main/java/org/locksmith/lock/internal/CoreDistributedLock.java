package org.locksmith.lock.internal;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.Lock;
import org.locksmith.lock.DistributedLock;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockTimeoutException;

/** A key seen through a {@link CoreLockClient}: turns timeouts into deadlines. Holds no state of its own. */
final class CoreDistributedLock implements DistributedLock {
    private final CoreLockClient client;
    private final String key;

    CoreDistributedLock(CoreLockClient client, String key) {
        this.client = client;
        this.key = key;
    }

    @Override
    public String key() {
        return key;
    }

    @Override
    public LockLease acquire(Duration timeout) throws InterruptedException {
        LockLease lease = client.acquire(within(timeout));
        if (lease == null) {
            throw notGranted(client, key, timeout);
        }
        return lease;
    }

    @Override
    public LockLease acquire() throws InterruptedException {
        return client.acquire(Acquisition.blocking(key));
    }

    /**
     * {@code Lock.lock()}: waits without a deadline through interrupts, in one request (keeping its place in a fair
     * queue where the backend supports it); the caller restores the interrupt status. Throws {@code
     * InterruptedException} only if the backend does not honour {@code AcquireRequest.isInterruptible()}.
     */
    LockLease acquireUninterruptibly() throws InterruptedException {
        return client.acquire(Acquisition.blocking(key).uninterruptible());
    }

    @Override
    public Optional<LockLease> tryAcquire() {
        try {
            return Optional.ofNullable(client.acquire(Acquisition.attempt(key).uninterruptible()));
        } catch (InterruptedException e) {
            throw new AssertionError("a try without waiting does not check interruption", e);
        }
    }

    @Override
    public Optional<LockLease> tryAcquire(Duration timeout) throws InterruptedException {
        return Optional.ofNullable(client.acquire(within(timeout)));
    }

    /** A timed acquire, its deadline counted from now: a zero timeout is a single attempt. */
    private Acquisition within(Duration timeout) {
        checkTimeout(timeout);
        return timeout.isZero() ? Acquisition.attempt(key) : Acquisition.timed(key, deadline(timeout));
    }

    /**
     * The exception of an acquire that was not granted within its timeout, naming why if the backend said
     * ({@link org.locksmith.lock.spi.AcquireRequest#refusedBecause}); called on the thread whose acquire returned
     * null, right after it.
     */
    static LockTimeoutException notGranted(CoreLockClient client, String key, Duration timeout) {
        String refusal = CoreLockClient.takeRefusal();
        return new LockTimeoutException("Key '" + key + "' was not granted within " + timeout + " (backend "
                + client.backend() + ")" + (refusal == null ? "" : ": " + refusal));
    }

    private static void checkTimeout(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must not be negative: " + timeout);
        }
    }

    @Override
    public LockLease acquireDetached(Duration timeout) throws InterruptedException {
        LockLease lease = client.acquire(within(timeout).detached());
        if (lease == null) {
            throw notGranted(client, key, timeout);
        }
        return lease;
    }

    @Override
    public Optional<LockLease> tryAcquireDetached() {
        try {
            return Optional.ofNullable(
                    client.acquire(Acquisition.attempt(key).uninterruptible().detached()));
        } catch (InterruptedException e) {
            throw new AssertionError("a try without waiting does not check interruption", e);
        }
    }

    @Override
    public CompletableFuture<LockLease> acquireAsync(Duration timeout) {
        return startAsync(timeout, null);
    }

    @Override
    public CompletableFuture<LockLease> acquireAsync(Duration timeout, Executor executor) {
        Objects.requireNonNull(executor, "executor");
        return startAsync(timeout, executor);
    }

    private CompletableFuture<LockLease> startAsync(Duration timeout, Executor executor) {
        checkTimeout(timeout);
        client.ensureOpen();
        AsyncAcquire async = new AsyncAcquire(client, key, timeout, deadline(timeout), executor);
        client.startAsync(async);
        return async;
    }

    static long deadline(Duration timeout) {
        long now = System.nanoTime();
        long nanos;
        try {
            nanos = timeout.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
        long deadline = now + nanos;
        // Saturate: a very long timeout means "no deadline", not a deadline in the past.
        return (deadline - now < 0 || nanos > Long.MAX_VALUE / 2) ? Long.MAX_VALUE : deadline;
    }

    @Override
    public boolean isHeldByCurrentThread() {
        CoreLease lease = client.heldByCurrentThread(key);
        return lease != null && lease.isValid();
    }

    @Override
    public Lock asLock() {
        return new JucLockAdapter(this, client);
    }

    @Override
    public String toString() {
        return "DistributedLock[" + key + " via " + client.backend() + "]";
    }
}
