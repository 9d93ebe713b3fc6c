package org.locksmith.lock.internal;

import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.ReentrantLock;
import org.locksmith.lock.LockLease;

/**
 * One {@code acquireAsync}: the future the caller holds, and the task that waits for a detached lease on a thread of
 * the client's async executor. {@link #cancel} cancels the waiting request as a deadline would (the backend's cancel
 * actions end its wait; no interrupt, which on a virtual thread would close the backend's socket). A lease that
 * arrives when the future is already complete is released: nobody else would.
 *
 * <p>Every future not complete when the client's {@code close()} begins fails: a wait still running ends with the
 * close, one not started finds the client closed, and a lease whose delivery was queued (on a busy completion
 * executor) is released when the delivery runs and sees the client closed, instead of completing the future with a
 * lease that close() released.
 */
final class AsyncAcquire extends CompletableFuture<LockLease> implements Runnable {
    private final CoreLockClient client;
    private final String key;
    private final Duration timeout;
    private final long deadlineNanos;
    /** Where the future completes; null: on the waiting thread. */
    private final Executor executor;

    private final ReentrantLock lock = new ReentrantLock();
    /** The request in the backend while it waits; guarded by {@link #lock}. */
    private CoreAcquireRequest request;

    AsyncAcquire(CoreLockClient client, String key, Duration timeout, long deadlineNanos, Executor executor) {
        this.client = client;
        this.key = key;
        this.timeout = timeout;
        this.deadlineNanos = deadlineNanos;
        this.executor = executor;
    }

    @Override
    public void run() {
        if (isDone()) {
            return; // cancelled before it started
        }
        CoreLease lease = null;
        Throwable failure = null;
        try {
            Acquisition acquisition =
                    timeout.isZero() ? Acquisition.attempt(key) : Acquisition.timed(key, deadlineNanos);
            lease = client.acquire(acquisition.uninterruptible().detached().observedBy(this));
            if (lease == null) {
                failure = isCancelled()
                        ? new CancellationException("acquireAsync of key '" + key + "' was cancelled")
                        : CoreDistributedLock.notGranted(client, key, timeout);
            }
        } catch (InterruptedException e) {
            // Not interruptible: only a backend that ignores AcquireRequest.isInterruptible() throws it.
            failure = e;
        } catch (RuntimeException | Error e) {
            failure = e;
        } finally {
            lock.lock();
            try {
                request = null;
            } finally {
                lock.unlock();
            }
        }
        deliver(lease, failure);
    }

    /** Called by the core once the attempt is registered, before the backend sees it. */
    void started(CoreAcquireRequest attempt) {
        lock.lock();
        try {
            request = attempt;
        } finally {
            lock.unlock();
        }
        if (isCancelled()) {
            attempt.cancel(); // cancelled before the request existed
        }
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        boolean cancelled = super.cancel(mayInterruptIfRunning);
        if (cancelled) {
            CoreAcquireRequest attempt;
            lock.lock();
            try {
                attempt = request;
            } finally {
                lock.unlock();
            }
            if (attempt != null) {
                attempt.cancel();
            }
        }
        return cancelled;
    }

    private void deliver(CoreLease lease, Throwable failure) {
        if (executor == null) {
            complete(lease, failure);
            return;
        }
        try {
            executor.execute(() -> complete(lease, failure));
        } catch (RuntimeException e) {
            if (lease != null) {
                lease.releaseUnclaimed();
            }
            completeExceptionally(e);
        }
    }

    private void complete(CoreLease lease, Throwable failure) {
        if (lease == null) {
            completeExceptionally(failure);
        } else if (client.isClosed()) {
            // Granted before close(), delivered after it began (a busy executor ran this late): close() fails every
            // future not complete when it began, and has released the lease or is releasing it; this release then
            // finds it released, so the store sees one release.
            lease.releaseUnclaimed();
            completeExceptionally(client.closedWhileWaiting(key));
        } else if (!complete(lease)) {
            lease.releaseUnclaimed(); // cancelled or completed by the caller meanwhile
        }
    }
}
