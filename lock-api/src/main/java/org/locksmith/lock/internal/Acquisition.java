package org.locksmith.lock.internal;

/**
 * What one call of {@link CoreLockClient#acquire(Acquisition)} asks for: a key; how long to wait (without a
 * deadline, until a {@link System#nanoTime()} deadline, or a single attempt); whether an interrupt fails the call;
 * whether the lease is owned by the calling thread or detached; and, for an async acquire, the future to tell the
 * request. Immutable: each modifier returns a new value. Start from {@link #blocking}, {@link #timed} or {@link
 * #attempt}, which ask for an interruptible acquire owned by the calling thread.
 */
final class Acquisition {
    private final String key;
    private final long deadlineNanos;
    private final boolean attempt;
    private final boolean interruptible;
    private final boolean detached;
    private final AsyncAcquire observer;

    private Acquisition(
            String key,
            long deadlineNanos,
            boolean attempt,
            boolean interruptible,
            boolean detached,
            AsyncAcquire observer) {
        this.key = key;
        this.deadlineNanos = deadlineNanos;
        this.attempt = attempt;
        this.interruptible = interruptible;
        this.detached = detached;
        this.observer = observer;
    }

    /** Waits for {@code key} without a deadline. */
    static Acquisition blocking(String key) {
        return new Acquisition(key, Long.MAX_VALUE, false, true, false, null);
    }

    /** Waits for {@code key} until {@code deadlineNanos}, a {@link System#nanoTime()} value. */
    static Acquisition timed(String key, long deadlineNanos) {
        return new Acquisition(key, deadlineNanos, false, true, false, null);
    }

    /** One attempt at {@code key}, no waiting; its deadline is now. */
    static Acquisition attempt(String key) {
        return new Acquisition(key, System.nanoTime(), true, true, false, null);
    }

    /**
     * An interrupt does not fail the call, neither pending nor arriving while it waits: for {@code tryAcquire()},
     * which (like {@code Lock.tryLock()}) does not look at it, and for {@code asLock().lock()}, which waits through
     * interrupts and returns with the status set. Without this, an interrupt fails the call, also a re-entry or a
     * single attempt.
     */
    Acquisition uninterruptible() {
        return new Acquisition(key, deadlineNanos, attempt, false, detached, observer);
    }

    /** A detached lease: owned by no thread, it re-enters nothing and is never re-entered. */
    Acquisition detached() {
        return new Acquisition(key, deadlineNanos, attempt, interruptible, true, observer);
    }

    /**
     * An async acquire's: {@code async} is told the request before the backend sees it, so that cancelling the future
     * can cancel the request. Only for a detached acquisition.
     */
    Acquisition observedBy(AsyncAcquire async) {
        if (!detached) {
            throw new IllegalStateException("an async acquire is detached");
        }
        return new Acquisition(key, deadlineNanos, attempt, interruptible, true, async);
    }

    String key() {
        return key;
    }

    /** The deadline, a {@link System#nanoTime()} value; {@link Long#MAX_VALUE} for none. */
    long deadlineNanos() {
        return deadlineNanos;
    }

    /** One attempt, no waiting. */
    boolean isAttempt() {
        return attempt;
    }

    /** Whether an interrupt fails the call; see {@link #uninterruptible()}. */
    boolean interruptible() {
        return interruptible;
    }

    /** Whether the lease is owned by no thread; see {@link #detached()}. */
    boolean isDetached() {
        return detached;
    }

    /** The async acquire to tell the request, or null. */
    AsyncAcquire observer() {
        return observer;
    }

    @Override
    public String toString() {
        return "Acquisition[" + key + (attempt ? ", attempt" : deadlineNanos == Long.MAX_VALUE ? ", no deadline" : "")
                + (interruptible ? "" : ", uninterruptible") + (detached ? ", detached" : "")
                + (observer == null ? "" : ", async") + "]";
    }
}
