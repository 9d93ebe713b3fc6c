package org.locksmith.lock.spi;

/**
 * Where a backend reports, lease by lease, what became of a renewal round ({@link LockBackend#renew}). Each lease
 * gets one outcome; the first report of a lease counts and later ones are ignored. A lease with no report when
 * {@code renew} returns (or throws) counts as {@linkplain #unconfirmed unconfirmed}.
 *
 * <p>Report each lease as soon as its round trip answered: the core then updates its validity and lets its owner
 * release it, without waiting for the rest of the round (another node, another shard). Thread-safe: a backend that
 * renews nodes or shards in parallel reports from its own threads.
 */
public interface RenewalReport {

    /**
     * The store confirmed {@code lease} held, by a round trip sent at {@code sentAtNanos} (a {@link
     * System#nanoTime()} value read before the request went out); its validity now counts from then.
     */
    void renewed(BackendLease lease, long sentAtNanos);

    /** The store no longer holds {@code lease} for its owner (expired, taken over, deleted, session gone). */
    void lost(BackendLease lease, String reason);

    /**
     * The store could not be asked about {@code lease} (its node or shard is unreachable, the call timed out); the
     * core tries again next round and declares it lost once its time has run out.
     */
    void unconfirmed(BackendLease lease, Throwable cause);
}
