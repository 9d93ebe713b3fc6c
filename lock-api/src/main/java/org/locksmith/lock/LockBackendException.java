package org.locksmith.lock;

/**
 * The store failed or could not be reached within the client's configured timeout. Carries the store's own
 * exception as its cause. Whether the lock was granted is unknown to the caller only in the sense that nothing is
 * held: the core never returns a lease it could not confirm.
 */
public class LockBackendException extends LockException {
    private static final long serialVersionUID = 1L;

    public LockBackendException(String message) {
        super(message);
    }

    public LockBackendException(String message, Throwable cause) {
        super(message, cause);
    }
}
