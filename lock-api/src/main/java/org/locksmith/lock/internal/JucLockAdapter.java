package org.locksmith.lock.internal;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/** {@link java.util.concurrent.locks.Lock} over a {@link CoreDistributedLock}; shares its hold counts. */
final class JucLockAdapter implements Lock {
    private final CoreDistributedLock lock;
    private final CoreLockClient client;

    JucLockAdapter(CoreDistributedLock lock, CoreLockClient client) {
        this.lock = lock;
        this.client = client;
    }

    @Override
    public void lock() {
        // Lock.lock() is not interruptible: one request that waits through interrupts (the backend restores the
        // status); a backend that throws InterruptedException anyway is asked again, and the status restored here.
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (lock.acquireUninterruptibly() != null) {
                        return;
                    }
                    // No deadline, not closed, yet no grant: a backend that gave up on an interrupt; ask again.
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        lock.acquire();
    }

    @Override
    public boolean tryLock() {
        return lock.tryAcquire().isPresent();
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        long nanos = unit.toNanos(time);
        if (nanos <= 0) {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            return tryLock();
        }
        return lock.tryAcquire(Duration.ofNanos(nanos)).isPresent();
    }

    @Override
    public void unlock() {
        CoreLease lease = client.heldByCurrentThread(lock.key());
        if (lease == null) {
            client.ensureOpen(); // close() released it: say so, rather than that this thread never held it
            throw new IllegalMonitorStateException(
                    "Thread '" + Thread.currentThread().getName() + "' does not hold key '" + lock.key() + "'");
        }
        lease.release();
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException(
                "Distributed locks do not support Conditions: a condition would need the store to carry signals");
    }

    @Override
    public String toString() {
        return "Lock[" + lock.key() + " via " + client.backend() + "]";
    }
}
