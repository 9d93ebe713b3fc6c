package org.locksmith.lock.mysql.internal;

/**
 * The session that had just been granted a lock ended before the grant was complete (killed, connection lost), so
 * the lock is not held: the backend tries again within the caller's deadline instead of returning a lease.
 */
final class SessionLostException extends RuntimeException {
    SessionLostException(String message) {
        super(message, null, false, false);
    }
}
