package org.locksmith.lock;

import java.util.Set;

/**
 * One connection set to one lock store: what one process holds. Obtain one with {@link Locks#open(String)} or a
 * backend's own factory; share it between threads (it is thread-safe) and close it when the application stops.
 *
 * <p>Two clients are two independent owners, exactly as two processes would be, even inside one JVM: a lock held
 * through one client is not held through the other.
 *
 * <p>{@link #close()} releases every lease this client still holds (all at once, so that a slow store costs about
 * one release, not one per lease), makes every thread waiting in {@link DistributedLock#acquire} fail promptly with
 * {@link IllegalStateException} (leaving its interrupt status as it was), stops the client's threads and closes its
 * connections. It may be called from a loss listener. A release or re-entry racing close either happens before
 * close ends that lease or fails; after close, every method but {@link #close()}, {@link #features()} and {@link
 * #backend()} throws {@link IllegalStateException}, and so does every acquire and re-entry.
 */
public interface LockClient extends AutoCloseable {

    /**
     * The lock for {@code key}, as seen through this client. Does no I/O.
     *
     * @param key any string of 1 to {@value Locks#MAX_KEY_LENGTH} characters that is well-formed UTF-16 (no
     *     unpaired surrogate). Distinct keys never share a lock.
     * @throws NullPointerException if key is null
     * @throws IllegalArgumentException if key is empty, longer than {@value Locks#MAX_KEY_LENGTH} characters or
     *     contains an unpaired surrogate
     * @throws IllegalStateException if this client is closed
     */
    DistributedLock lock(String key);

    /** The guarantees this client makes; the TCK holds it to exactly these. Never null; unmodifiable. */
    Set<LockFeature> features();

    /** A short name of the backend and its configuration, such as {@code redis} or {@code mysql-row}. */
    String backend();

    /**
     * Sends this client's lock events to {@code observer} from now on, in addition to any observer added before
     * (see {@link LockObserver} for when and on which thread). Adding the same observer twice makes it receive each
     * event twice.
     *
     * @throws NullPointerException if observer is null
     */
    void addObserver(LockObserver observer);

    /** Stops sending events to {@code observer} (one registration of it); nothing if it was not added. */
    void removeObserver(LockObserver observer);

    /**
     * Releases this client's leases, fails its waiters, stops its threads and closes its connections. Idempotent.
     * Failures to release in the store are logged, not thrown: the store frees those locks by itself (session end
     * or lease expiry).
     */
    @Override
    void close();
}
