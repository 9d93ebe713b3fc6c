package org.locksmith.lock.spi;

import java.util.Optional;
import java.util.Set;
import org.locksmith.lock.LockClient;

/**
 * Makes a backend discoverable by {@link org.locksmith.lock.Locks#open(String)} through {@link
 * java.util.ServiceLoader}, the way a JDBC driver is found by its URL. Register the implementation in {@code
 * META-INF/services/org.locksmith.lock.spi.LockProvider} and, in a named module, with {@code provides}. It must
 * have a public no-argument constructor and do no I/O until {@link #open}.
 *
 * <p>A provider may also open a client on a connection the application already has (its {@code DataSource}, its
 * Redis or ZooKeeper client), as the Spring Boot starter does with {@code locksmith.use-application-connections}:
 * see {@link #applicationConnectionType()}, {@link #applicationConnectionParameters()} and {@link
 * #openClient(LockUrl, Object)}. A provider that does not override them supports no application connection.
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

    /**
     * The type of application-owned connection object this provider can open a client on (for example Jedis's
     * {@code UnifiedJedis}, Curator's {@code CuratorFramework} or {@code javax.sql.DataSource}), or empty (the
     * default) if it can open clients only from URLs. Does no I/O.
     */
    default Optional<Class<?>> applicationConnectionType() {
        return Optional.empty();
    }

    /**
     * The query parameters that still apply when the client is opened on an application's connection: the lock
     * settings, a subset of {@link #parameters()}. The others only configure the connections the provider would make
     * itself (addresses, credentials, timeouts, pool sizes of its own pools, TLS), which the application's object
     * now decides; {@link org.locksmith.lock.Locks#open(LockProvider, LockUrl, java.util.function.Supplier)} rejects
     * a URL with any of them, before any I/O. Empty by default.
     */
    default Set<String> applicationConnectionParameters() {
        return Set.of();
    }

    /**
     * Opens a client on {@code connection}, an object the application made and owns, with the lock settings of
     * {@code url}. Called by {@link org.locksmith.lock.Locks#open(LockProvider, LockUrl, java.util.function.Supplier)}
     * only after it checked that {@code url}'s scheme is one of {@link #schemes()}, that its parameters are among
     * {@link #applicationConnectionParameters()}, and that {@code connection} is an instance of {@link
     * #applicationConnectionType()}. The URL's hosts, user and password are not used (the connection decides where
     * and as whom to connect); its path may be, where it names something inside the store (a ZooKeeper root).
     *
     * <p>The provider validates every parameter's value with the same names, defaults and ranges as {@link
     * #open(LockUrl)} before any I/O, and throws {@link IllegalArgumentException} saying what to change. The client
     * returned does not close {@code connection}: the application does, after closing the client. It returns a
     * client rather than a {@link LockBackend} so that a provider can reuse its backend's public factory on an
     * application object (such as {@code RedisLocks.builder()...build(jedis)}), which wraps its backend with {@link
     * org.locksmith.lock.Locks#client(LockBackend)}.
     *
     * <p>The default throws {@link UnsupportedOperationException} naming the provider.
     *
     * @throws IllegalArgumentException if a setting is invalid (before any I/O)
     * @throws UnsupportedOperationException if this provider supports no application connection
     * @throws org.locksmith.lock.LockBackendException if the store cannot be reached through {@code connection}
     */
    default LockClient openClient(LockUrl url, Object connection) {
        throw new UnsupportedOperationException(
                "Lock provider '" + name() + "' (" + getClass().getName()
                        + ") cannot open a client on an application's connection; open it from a URL instead");
    }
}
