package org.locksmith.lock;

/**
 * The root of Locksmith's own exceptions. Unchecked: a lock that cannot be had is usually handled far from
 * where it was asked for. Misuse is reported with the JDK's exceptions instead ({@link
 * IllegalMonitorStateException}, {@link IllegalArgumentException}, {@link NullPointerException}, {@link
 * IllegalStateException}).
 */
public class LockException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public LockException(String message) {
        super(message);
    }

    public LockException(String message, Throwable cause) {
        super(message, cause);
    }
}
