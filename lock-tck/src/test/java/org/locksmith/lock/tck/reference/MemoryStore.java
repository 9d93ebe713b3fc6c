package org.locksmith.lock.tck.reference;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The shared "server" of the in-memory reference backend: every client opened on one store contends for the same
 * keys, as processes sharing a database would. Guarded by one lock; waiters wait on one condition.
 */
final class MemoryStore {
    final ReentrantLock lock = new ReentrantLock();
    final Condition changed = lock.newCondition();
    final Map<String, KeyState> keys = new HashMap<>();
    /** Fencing counters outlive lock state and restarts: the "durable" part of the store. */
    final Map<String, Long> counters = new HashMap<>();
    /** Used only by the defect that keeps the counter with the lock state, so that a crash resets it. */
    final Map<String, Long> crashCounters = new HashMap<>();

    boolean down;

    /**
     * Keys whose holder's "connection" is stalled: a renewal of their grant gets no answer until the stall ends (or
     * its call times out). Guarded by {@link #lock}; a change signals {@link #changed}.
     */
    final java.util.Set<String> stalled = new java.util.HashSet<>();

    /**
     * Until when ({@link System#nanoTime()}) a restarted store grants nothing: a lock it forgot may still be believed
     * held by a client whose lease or session bound has not run out yet.
     */
    long grantsFromNanos = System.nanoTime();

    /** Clients "connected" to this store: opened and not yet closed. */
    final java.util.concurrent.atomic.AtomicInteger connections = new java.util.concurrent.atomic.AtomicInteger();
    /** Requests served: every acquire attempt or re-check, renewal round and release, as a server would count. */
    final java.util.concurrent.atomic.AtomicLong operations = new java.util.concurrent.atomic.AtomicLong();
    /** Releases counted by the defect that drops every second release notification. */
    final java.util.concurrent.atomic.AtomicLong releaseNotifications = new java.util.concurrent.atomic.AtomicLong();

    static final class KeyState {
        MemoryLockBackend.Grant holder;
        final ArrayDeque<Object> waiters = new ArrayDeque<>();
        /** Waiter records marked abandoned and kept (a defect's); always 0 in the correct store. */
        int abandoned;
    }

    /** Records for key: the holder, every queued waiter and any abandoned waiter record. Caller holds {@link #lock}. */
    int entries(String key) {
        KeyState ks = keys.get(key);
        return ks == null ? 0 : (ks.holder == null ? 0 : 1) + ks.waiters.size() + ks.abandoned;
    }

    int entriesLocked(String key) {
        lock.lock();
        try {
            return entries(key);
        } finally {
            lock.unlock();
        }
    }

    void dropIfUnused(String key, KeyState ks) {
        if (ks.holder == null && ks.waiters.isEmpty() && ks.abandoned == 0) {
            keys.remove(key, ks);
        }
    }

    void setStalled(String key, boolean value) {
        lock.lock();
        try {
            if (value) {
                stalled.add(key);
            } else {
                stalled.remove(key);
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    void setDown(boolean value) {
        lock.lock();
        try {
            down = value;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * A crash restart: lock state and waiters' places are gone; the fencing counters survive. The store then grants
     * nothing for {@code holdOff}, the longest a client may believe in a lock it held before.
     */
    /** A restart with none of the store's data: {@link #restart}, and the fencing counters are gone too. */
    void restartEmpty(java.time.Duration holdOff) {
        lock.lock();
        try {
            counters.clear();
            crashCounters.clear();
        } finally {
            lock.unlock();
        }
        restart(holdOff);
    }

    void restart(java.time.Duration holdOff) {
        lock.lock();
        try {
            keys.clear();
            grantsFromNanos = System.nanoTime() + holdOff.toNanos();
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }
}
