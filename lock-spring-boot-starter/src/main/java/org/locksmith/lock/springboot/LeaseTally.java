package org.locksmith.lock.springboot;

import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import org.locksmith.lock.LockObserver;

/**
 * Counts a client's held leases and its recent losses from its lock events, for the health indicator. The health
 * probe's own key is left out, so that a probe never shows as a held lease.
 */
final class LeaseTally implements LockObserver {
    /** Bounds the memory of a storm of losses; the count saturates there, which the health details say. */
    static final int MAX_REMEMBERED_LOSSES = 10_000;

    private final String probeKey;
    private final long windowNanos;
    private final AtomicInteger held = new AtomicInteger();
    private final ConcurrentLinkedDeque<Long> losses = new ConcurrentLinkedDeque<>();

    LeaseTally(String probeKey, Duration window) {
        this.probeKey = probeKey;
        this.windowNanos = window.toNanos();
    }

    @Override
    public void acquired(String backend, String key, long waitNanos, long fencingToken) {
        if (!key.equals(probeKey)) {
            held.incrementAndGet();
        }
    }

    @Override
    public void released(String backend, String key, long holdNanos, boolean lost) {
        if (!key.equals(probeKey)) {
            held.decrementAndGet();
        }
    }

    @Override
    public void lost(String backend, String key, String reason) {
        losses.addLast(System.nanoTime());
        if (losses.size() > MAX_REMEMBERED_LOSSES) {
            losses.pollFirst();
        }
    }

    /** Leases granted and not yet released (a lost lease counts until its owner releases it). */
    int held() {
        return held.get();
    }

    /** Losses within the window, up to {@link #MAX_REMEMBERED_LOSSES}. */
    int lostRecently() {
        long now = System.nanoTime();
        Long oldest;
        while ((oldest = losses.peekFirst()) != null && now - oldest > windowNanos) {
            losses.remove(oldest);
        }
        return losses.size();
    }
}
