package org.locksmith.lock;

/** Thrown by {@link DistributedLock#acquire(java.time.Duration)} when the lock was not granted in time. */
public class LockTimeoutException extends LockException {
    private static final long serialVersionUID = 1L;

    public LockTimeoutException(String message) {
        super(message);
    }
}
