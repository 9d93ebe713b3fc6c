package org.locksmith.lock;

/**
 * A lease was lost behind its holder's back: it expired, its session with the store died, or its state in the
 * store was removed. Passed to {@link LockLease#onLost} listeners, and thrown by {@link LockLease#release()} of a
 * lost lease, so that work done under a lock that was not really held does not go unnoticed.
 */
public class LockLostException extends LockException {
    private static final long serialVersionUID = 1L;

    public LockLostException(String message) {
        super(message);
    }

    public LockLostException(String message, Throwable cause) {
        super(message, cause);
    }
}
