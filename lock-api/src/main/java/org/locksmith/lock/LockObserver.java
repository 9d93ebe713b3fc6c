package org.locksmith.lock;

/**
 * Receives a client's lock events as they happen, for metrics and logs (the Micrometer binder of {@code
 * lock-micrometer} is one). Register it with {@link LockClient#addObserver}; the same events go to the JDK Flight
 * Recorder whether or not an observer is registered.
 *
 * <p>Each method is called after the fact, synchronously, on the thread where the event happened: the thread that
 * acquired, released or gave up, or the core's renewal thread for losses and failed renewals. Keep every call short
 * and never block in it. An exception an observer throws is logged and ignored: it changes neither the outcome of
 * the lock operation nor what the other observers receive. A re-entrant acquire or release, which changes only the
 * hold count, is not an event. Times are {@link System#nanoTime()} differences.
 */
public interface LockObserver {

    /**
     * The store granted {@code key} (not a re-entry).
     *
     * @param waitNanos how long the caller waited, from its call to the grant
     * @param fencingToken the lease's token, or -1 if the backend does not declare {@link LockFeature#FENCING}
     */
    default void acquired(String backend, String key, long waitNanos, long fencingToken) {}

    /**
     * A lease ended: released by its owner, or by {@link LockClient#close()}.
     *
     * @param holdNanos how long it was held, from the grant
     * @param lost whether it had been lost before it was released
     */
    default void released(String backend, String key, long holdNanos, boolean lost) {}

    /** A timed acquire of {@code key} gave up at its deadline after {@code waitNanos}. */
    default void timedOut(String backend, String key, long waitNanos) {}

    /** A held lease of {@code key} was lost (expired, session ended, taken over, deleted), for {@code reason}. */
    default void lost(String backend, String key, String reason) {}

    /** A renewal of {@code key} could not be confirmed, for {@code reason}; the core tries again. */
    default void renewalFailed(String backend, String key, String reason) {}

    /** The store failed during {@code operation} ({@code acquire} or {@code release}) on {@code key}. */
    default void backendError(String backend, String key, String operation, LockBackendException error) {}
}
