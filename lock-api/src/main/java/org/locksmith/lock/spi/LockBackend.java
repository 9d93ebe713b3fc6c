package org.locksmith.lock.spi;

import java.time.Duration;
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
     * Renews every lease in {@code leases} (all granted by this backend, none being released meanwhile) and reports
     * each one's outcome to {@code report}: {@linkplain RenewalReport#renewed renewed}, {@linkplain
     * RenewalReport#lost lost} or {@linkplain RenewalReport#unconfirmed unconfirmed}. A failure of one node or shard
     * makes only its own leases unconfirmed; a lease left unreported, or every unreported lease when this method
     * throws, counts as unconfirmed.
     *
     * <p>A lease's owner cannot release it until its outcome is reported, so report each lease as soon as its round
     * trip answered, and renew independent nodes, shards, sessions or connections in parallel or pipelined: one
     * stalled session must not delay another lease's outcome, or the other lease's time may run out while it waits
     * (then a release also waits at most one operation timeout for a renewal). Return only when no call on these
     * leases is in flight any more. The core never waits for one call before it starts the next round: a lease whose
     * outcome is still pending is left out of later calls until it is reported, so calls may overlap on distinct
     * leases.
     *
     * <p>The default renews the leases one after another with {@link BackendLease#renew()}, one round trip each, and
     * reports each at once; the core calls it with one lease at a time, all due leases at once on threads of its
     * own, so that these renewals are independent too. Override it to renew many in one round trip.
     */
    default void renew(List<BackendLease> leases, RenewalReport report) {
        for (BackendLease lease : leases) {
            long sentAt = System.nanoTime();
            boolean held;
            try {
                held = lease.renew();
            } catch (RuntimeException e) {
                report.unconfirmed(lease, e);
                continue;
            }
            if (held) {
                report.renewed(lease, sentAt);
            } else {
                report.lost(lease, "renewal refused: the store no longer holds it");
            }
        }
    }

    /** Closes the backend's connections and threads. The core releases held leases before calling it. */
    @Override
    void close();
}
