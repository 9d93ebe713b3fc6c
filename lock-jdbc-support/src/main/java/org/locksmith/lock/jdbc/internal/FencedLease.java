package org.locksmith.lock.jdbc.internal;

import org.locksmith.lock.spi.BackendLease;

/**
 * A granted lease's fixed facts: its fencing token and when the store last proved the grant, both known at the grant
 * and never changed after. Subclasses say how the lease is renewed and released.
 */
public abstract class FencedLease implements BackendLease {
    private final long token;
    private final long confirmedAtNanos;

    /**
     * @param token the grant's fencing token
     * @param confirmedAtNanos the {@link System#nanoTime()} from which the grant is known to hold
     */
    protected FencedLease(long token, long confirmedAtNanos) {
        this.token = token;
        this.confirmedAtNanos = confirmedAtNanos;
    }

    @Override
    public final long fencingToken() {
        return token;
    }

    @Override
    public final long confirmedAtNanos() {
        return confirmedAtNanos;
    }
}
