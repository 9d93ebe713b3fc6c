package org.locksmith.lock.springintegration;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.locksmith.lock.LockLease;

/**
 * The locks of one registry taken with a time to live ({@code lock(ttl)}, {@code tryLock(wait, ttl)}): each is a
 * detached Locksmith lease, renewed in the background like any lease until its end, and released by a timer at the
 * end. A detached lease, not the thread's own, because the timer releases it from another thread; the registry still
 * gives it to one thread (re-entry, unlock). Ended holds stay until their thread unlocks them (which then reports the
 * end) or {@link #expireEndedBefore} drops them.
 */
final class TtlHolds {

    /** One timer thread for every registry; it only releases leases at their end (each release has the client's deadline). */
    private static final ScheduledThreadPoolExecutor TIMER = timer();

    private final Map<Owner, Hold> holds = new ConcurrentHashMap<>();

    private static ScheduledThreadPoolExecutor timer() {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "locksmith-spring-integration-ttl");
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
        return timer;
    }

    /** A key as held by one thread. */
    private record Owner(String key, Thread thread) {}

    /** One thread's hold of one key under a time to live. */
    static final class Hold {
        private final LockLease lease;
        private final AtomicBoolean ended = new AtomicBoolean();
        private int count = 1; // only the owning thread reads or writes it
        private volatile long endNanos;
        private volatile long endedAtNanos;

        private Hold(LockLease lease, Duration ttl) {
            this.lease = lease;
            this.endNanos = System.nanoTime() + ttl.toNanos();
        }

        /** Whether the hold is over: its time to live ran out, or its lease was lost. */
        boolean ended() {
            return ended.get() || !lease.isValid();
        }

        LockLease lease() {
            return lease;
        }

        /** The end moves to {@code ttl} from now. */
        void extend(Duration ttl) {
            endNanos = System.nanoTime() + ttl.toNanos();
        }

        /**
         * Ends the hold once: releases its lease.
         *
         * @return true if this call ended it and its lease was still held (released now); false if it had ended
         *     before, or the lease turned out lost
         */
        boolean end() {
            if (!ended.compareAndSet(false, true)) {
                return false;
            }
            endedAtNanos = System.nanoTime();
            try {
                lease.release();
                return true;
            } catch (org.locksmith.lock.LockLostException lost) {
                return false;
            } catch (RuntimeException e) {
                // the store failed: the store frees the key at the lease's end by itself, as after any release failure
                return true;
            }
        }
    }

    /** The current thread's hold of {@code key}, ended or not, or null. */
    Hold mine(String key) {
        return holds.get(new Owner(key, Thread.currentThread()));
    }

    /** Records the current thread's new hold of {@code key} through {@code lease}, ending {@code ttl} from now. */
    Hold start(String key, LockLease lease, Duration ttl) {
        Hold hold = new Hold(lease, ttl);
        holds.put(new Owner(key, Thread.currentThread()), hold);
        schedule(hold, ttl.toNanos());
        return hold;
    }

    private static void schedule(Hold hold, long delayNanos) {
        try {
            TIMER.schedule(() -> check(hold), Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        } catch (RuntimeException rejected) {
            hold.end(); // cannot happen with this timer; never leave a TTL without an end
        }
    }

    private static void check(Hold hold) {
        if (hold.ended.get()) {
            return;
        }
        long left = hold.endNanos - System.nanoTime();
        if (left > 0) {
            schedule(hold, left); // extended meanwhile
        } else {
            hold.end();
        }
    }

    /**
     * One hold given back by the current thread; the last one ends the hold.
     *
     * @return false if that was the last hold and the hold had ended before (time to live run out, or lease lost):
     *     the caller reports the end; true otherwise
     */
    boolean unlock(String key, Hold hold) {
        if (--hold.count > 0) {
            return true;
        }
        holds.remove(new Owner(key, Thread.currentThread()), hold);
        return hold.end();
    }

    /** One more hold by the owning thread. */
    static void reenter(Hold hold) {
        hold.count++;
    }

    /** Drops the holds that ended more than {@code ageMillis} ago (their threads never unlocked them). */
    void expireEndedBefore(long ageMillis) {
        long now = System.nanoTime();
        holds.values().removeIf(h -> h.ended.get() && now - h.endedAtNanos >= TimeUnit.MILLISECONDS.toNanos(ageMillis));
    }
}
