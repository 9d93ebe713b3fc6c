package org.locksmith.lock.spi;

/**
 * A lock granted by a {@link LockBackend}: the store-side state of one grant. The core creates one user-facing
 * {@link org.locksmith.lock.LockLease} around it and calls each of these methods from one thread at a time.
 */
public interface BackendLease {

    /**
     * The grant's fencing token, strictly greater than every earlier token of this key. Called only when the
     * backend declares {@link org.locksmith.lock.LockFeature#FENCING}.
     */
    long fencingToken();

    /**
     * The {@link System#nanoTime()} at which the round trip that granted this lease was sent. The store cannot have
     * started the lease earlier, so {@code confirmedAtNanos() + leaseTime} is a safe bound on its validity.
     */
    long confirmedAtNanos();

    /**
     * True while the backend cannot prove this lease held for a while but has not lost it, such as a session-bound
     * store's connection that dropped and may come back within the session: the lease is then not {@linkplain
     * org.locksmith.lock.LockLease#isValid() valid}, and turns valid again once this returns false (if its time has
     * not run out meanwhile; then it is lost). A backend that reports every doubt as a loss never returns true.
     * Called from any thread, on every {@code isValid()}: keep it a field read.
     */
    default boolean isSuspended() {
        return false;
    }

    /**
     * Extends this lease by the backend's lease time. Called only when {@link LockBackend#renewInterval()} is
     * positive; backends that renew many leases in one round trip override {@link LockBackend#renew} instead.
     *
     * @return false if the store no longer holds this lease for its owner (it is lost)
     * @throws org.locksmith.lock.LockBackendException if the store could not be reached; the core retries
     */
    default boolean renew() {
        throw new UnsupportedOperationException(getClass().getName() + " does not renew leases");
    }

    /**
     * Releases the lock in the store if, and only if, the store still holds it for this lease's owner; a waiter, if
     * any, is woken. Called once.
     *
     * @return true if this lease was still held and is now released; false if the store no longer held it for
     *     this owner (expired, taken over, session gone)
     * @throws org.locksmith.lock.LockBackendException if the store could not be reached
     */
    boolean release();
}
