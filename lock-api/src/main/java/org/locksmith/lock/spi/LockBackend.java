package org.locksmith.lock.spi;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.locksmith.lock.LockFeature;

/**
 * The few primitives a store must offer; the shared core ({@link org.locksmith.lock.Locks#client(LockBackend)})
 * builds reentrancy, deadlines, interruption, renewal, loss detection, the {@code java.util.concurrent} adapter and
 * key validation on top, so that every backend behaves the same where the TCK says it must.
 *
 * <p>What a backend does: acquire a key for an owner with a deadline (waking on the store's own notification where
 * it has one), release with an owner check, renew, issue fencing tokens, report lost sessions through {@link
 * AcquireRequest#reportLost}, and encode keys safely for its store. It never sees a re-entrant acquire: the core
 * handles those without a round trip. Implementations must be thread-safe.
 *
 * <p>Failures of the store are reported as {@link org.locksmith.lock.LockBackendException} carrying the store's
 * exception and naming the address, within the backend's configured timeout.
 */
public interface LockBackend extends AutoCloseable {

    /** A short name of the backend and its configuration, such as {@code redis} or {@code mysql-row}. */
    String name();

    /** Exactly the guarantees this backend provides; the TCK enforces them. */
    Set<LockFeature> features();

    /**
     * How long the store keeps a lease without renewal, or {@link Duration#ZERO} if leases do not expire. When
     * positive, the core reports a lease invalid (and lost, firing its listeners) once this time has passed since it
     * was last confirmed. Never null or negative; positive if the backend declares {@link LockFeature#LEASE_EXPIRY}.
     * The core checks these rules when the client is built and rejects a backend that breaks them.
     */
    Duration leaseTime();

    /**
     * How often the core calls {@link #renew} with every held lease, or {@link Duration#ZERO} for never. Leased
     * backends use a fraction of {@link #leaseTime()} (a third leaves room for two failed attempts); session-bound
     * backends may use it to check that their sessions are alive. Never null or negative; positive if the backend
     * declares {@link LockFeature#AUTO_RENEWAL}; shorter than a positive {@link #leaseTime()}. The core checks these
     * rules when the client is built and rejects a backend that breaks them.
     */
    Duration renewInterval();

    /**
     * How long the store keeps the session that binds this backend's locks once it hears nothing from this client
     * (ZooKeeper's negotiated session timeout, a database's idle-connection timeout), or {@link Duration#ZERO} if
     * locks are not bound to a session that expires by itself.
     *
     * <p>When positive, the core trusts a lease only until the send time of the last round trip that proved its
     * session alive (the grant, then each {@link #renew} round that returns it as held) plus this time, minus the
     * drift margin, whether or not the backend has reported a loss: a process paused (GC, SIGSTOP, a frozen VM)
     * past its session resumes with {@code isValid() == false} before it can act on a lock another process may
     * hold. The core proves sessions alive with {@link #renew} rounds, so {@link #renewInterval()} must then be
     * positive and shorter than this time. Called at each confirmation, so it may follow a value the store
     * negotiates per session. Never null or negative; the core checks this when the client is built.
     */
    default Duration sessionTimeout() {
        return Duration.ZERO;
    }

    /**
     * Tries to acquire {@code request.key()} for {@code request.ownerId()} until the request's deadline.
     *
     * @return the granted lease, or null if the deadline passed or the request was cancelled first; nothing of the
     *     attempt may remain in the store in that case (no queue entry, no waiter node)
     * @throws InterruptedException if the waiting thread was interrupted (after cleaning up, as for null)
     * @throws org.locksmith.lock.LockBackendException if the store failed or was unreachable
     */
    BackendLease acquire(AcquireRequest request) throws InterruptedException;

    /**
     * Renews every lease in {@code leases} (all granted by this backend) and returns those that are no longer held.
     * The default renews one lease per round trip; override it to renew many in one.
     *
     * @throws org.locksmith.lock.LockBackendException if the store could not be reached; the core retries at the
     *     next interval and declares the leases lost once their lease time has run out
     */
    default List<BackendLease> renew(List<BackendLease> leases) {
        List<BackendLease> lost = new ArrayList<>();
        for (BackendLease lease : leases) {
            if (!lease.renew()) {
                lost.add(lease);
            }
        }
        return lost;
    }

    /** Closes the backend's connections and threads. The core releases held leases before calling it. */
    @Override
    void close();
}
