package org.locksmith.lock.spi;

import java.util.ArrayDeque;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A fair count of things a backend lends to acquire attempts one at a time (connections, slots to block in the
 * store). A waiter queues in arrival order and is woken by a {@link #release()} or by its request's cancellation
 * (deadline, interrupt, client close: the wait registers a cancel action), never by a timer slice: ten thousand
 * queued virtual threads cost nothing while they wait, where waits in 50 ms slices would wake two hundred thousand
 * times a second.
 *
 * <p>Thread-safe. Each permit taken by {@link #tryAcquire()} or {@link #acquire} must be given back once with {@link
 * #release()}.
 */
public final class Permits {
    private final ReentrantLock lock = new ReentrantLock();
    private final ArrayDeque<Waiter> queue = new ArrayDeque<>();
    private final int size;
    private int available;

    private static final class Waiter {
        final Condition woken;
        boolean granted;
        boolean cancelled;

        Waiter(Condition woken) {
            this.woken = woken;
        }
    }

    /**
     * @param permits how many may be lent at once
     * @throws IllegalArgumentException if permits is below 1
     */
    public Permits(int permits) {
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be at least 1, was " + permits);
        }
        this.size = permits;
        this.available = permits;
    }

    /** How many may be lent at once. */
    public int size() {
        return size;
    }

    /** Takes a permit if one is free and nobody queues for one; never waits. */
    public boolean tryAcquire() {
        lock.lock();
        try {
            if (available > 0 && queue.isEmpty()) {
                available--;
                return true;
            }
            return false;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes a permit, queueing behind earlier waiters for at most {@code maxWaitNanos} ({@link Long#MAX_VALUE}: no
     * limit) or until {@code request} is cancelled. An interrupt ends the wait with {@link InterruptedException} if
     * the request is interruptible; otherwise the wait goes on, and the interrupt status is set again on return.
     *
     * @return true with a permit; false if the time ran out or the request was cancelled first
     */
    public boolean acquire(AcquireRequest request, long maxWaitNanos) throws InterruptedException {
        long start = System.nanoTime();
        Waiter waiter;
        lock.lock();
        try {
            if (available > 0 && queue.isEmpty()) {
                available--;
                return true;
            }
            if (maxWaitNanos <= 0 || request.isCancelled()) {
                return false;
            }
            waiter = new Waiter(lock.newCondition());
            queue.addLast(waiter);
        } finally {
            lock.unlock();
        }
        request.onCancel(() -> cancel(waiter));
        boolean interrupted = false;
        lock.lock();
        try {
            while (!waiter.granted) {
                long left =
                        maxWaitNanos == Long.MAX_VALUE ? Long.MAX_VALUE : maxWaitNanos - (System.nanoTime() - start);
                if (waiter.cancelled || left <= 0 || request.isCancelled()) {
                    queue.remove(waiter);
                    return false;
                }
                try {
                    waiter.woken.awaitNanos(left);
                } catch (InterruptedException e) {
                    if (!request.isInterruptible()) {
                        interrupted = true;
                        continue;
                    }
                    if (waiter.granted) {
                        releaseLocked(); // granted in the same instant: pass it on
                    } else {
                        queue.remove(waiter);
                    }
                    throw e;
                }
            }
            return true;
        } finally {
            lock.unlock();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Gives a permit back: to the longest waiter if one queues, else to the pool. */
    public void release() {
        lock.lock();
        try {
            releaseLocked();
        } finally {
            lock.unlock();
        }
    }

    private void releaseLocked() {
        Waiter next = queue.pollFirst();
        if (next == null) {
            available++;
            return;
        }
        next.granted = true;
        next.woken.signal();
    }

    private void cancel(Waiter waiter) {
        lock.lock();
        try {
            if (!waiter.granted) {
                waiter.cancelled = true;
                waiter.woken.signal();
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        lock.lock();
        try {
            return "Permits[" + available + " of " + size + " free, " + queue.size() + " waiting]";
        } finally {
            lock.unlock();
        }
    }
}
