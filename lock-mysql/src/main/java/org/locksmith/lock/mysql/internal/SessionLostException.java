package org.locksmith.lock.mysql.internal;

import org.locksmith.lock.LockBackendException;

/**
 * The session that had just been granted a lock ended before the grant was complete (killed, connection lost), so
 * the lock is not held: a waiting acquire tries again within its deadline instead of returning a lease; a {@code
 * tryAcquire()} (one attempt) reports it as the store failure it is.
 */
final class SessionLostException extends LockBackendException {
    SessionLostException(String message) {
        super(message, null);
    }
}
