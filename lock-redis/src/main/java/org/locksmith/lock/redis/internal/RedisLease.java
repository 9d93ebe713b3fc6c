package org.locksmith.lock.redis.internal;

import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;

/** One grant in Redis: the lock hash held by {@link #owner} with fencing token {@link #token}. */
final class RedisLease implements BackendLease {
    final LockKeys keys;
    final String owner;
    private final RedisLockBackend backend;
    private final AcquireRequest request;
    private final long token;
    private final long confirmedAtNanos;

    RedisLease(RedisLockBackend backend, LockKeys keys, AcquireRequest request, long token, long confirmedAtNanos) {
        this.backend = backend;
        this.keys = keys;
        this.owner = request.ownerId();
        this.request = request;
        this.token = token;
        this.confirmedAtNanos = confirmedAtNanos;
    }

    @Override
    public long fencingToken() {
        return token;
    }

    @Override
    public long confirmedAtNanos() {
        return confirmedAtNanos;
    }

    @Override
    public boolean renew() {
        return backend.renewOne(this);
    }

    @Override
    public boolean release() {
        return backend.release(this);
    }

    @Override
    public String toString() {
        return "RedisLease[" + keys.hash() + ", owner=" + owner + ", token=" + token + "]";
    }
}
