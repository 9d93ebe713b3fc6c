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
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    lock.acquire();
                    return;
                } catch (InterruptedException e) {
                    interrupted = true; // Lock.lock() is not interruptible: keep waiting, restore the status after
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
