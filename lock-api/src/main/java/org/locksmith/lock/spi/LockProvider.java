package org.locksmith.lock.spi;

import java.util.Set;

/**
 * Makes a backend discoverable by {@link org.locksmith.lock.Locks#open(String)} through {@link
 * java.util.ServiceLoader}, the way a JDBC driver is found by its URL. Register the implementation in {@code
 * META-INF/services/org.locksmith.lock.spi.LockProvider} and, in a named module, with {@code provides}. It must
 * have a public no-argument constructor and do no I/O until {@link #open}.
 */
public interface LockProvider {

    /** The backend's name, shown when listing providers (for example {@code redis}). */
    String name();

    /** The URL schemes this provider opens, lower case (for example {@code redis} and {@code rediss}). */
    Set<String> schemes();

    /** The URL used when {@link org.locksmith.lock.Locks#open()} finds only this provider and no URL is set. */
    String defaultUrl();

    /**
     * Every query parameter this provider understands. The core rejects a URL with any other parameter before
     * calling {@link #open}, listing these in its message.
     */
    Set<String> parameters();

    /**
     * Opens a backend for {@code url}, whose scheme is one of {@link #schemes()} and whose parameters are among
     * {@link #parameters()}. Validate every setting before any I/O and say in the message what to change.
     *
     * @throws IllegalArgumentException if a setting is invalid
     * @throws org.locksmith.lock.LockBackendException if the store cannot be reached within the configured timeout
     */
    LockBackend open(LockUrl url);
}
