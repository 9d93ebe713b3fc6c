package org.locksmith.lock.mysql.internal;

import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;

/** How one {@link org.locksmith.lock.mysql.MySqlStrategy} acquires a key on the shard that owns it. */
interface Strategy {
    BackendLease acquire(Shard shard, byte[] keyHash, AcquireRequest request) throws InterruptedException;
}
