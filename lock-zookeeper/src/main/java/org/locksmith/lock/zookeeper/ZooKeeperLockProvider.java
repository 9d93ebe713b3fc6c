package org.locksmith.lock.zookeeper;

import java.util.Optional;
import java.util.Set;
import org.apache.curator.framework.CuratorFramework;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.spi.LockBackend;
import org.locksmith.lock.spi.LockProvider;
import org.locksmith.lock.spi.LockUrl;
import org.locksmith.lock.zookeeper.internal.CuratorClients;
import org.locksmith.lock.zookeeper.internal.ZooKeeperLockBackend;
import org.locksmith.lock.zookeeper.internal.ZooKeeperSettings;

/**
 * Opens ZooKeeper lock clients for {@code zookeeper://} URLs, found by {@link org.locksmith.lock.Locks#open(String)}
 * through {@link java.util.ServiceLoader}:
 *
 * <pre>{@code
 * zookeeper://host1:2181,host2:2181/root?sessionTimeoutMs=30000&connectionTimeoutMs=5000
 * }</pre>
 *
 * <ul>
 *   <li>hosts: the ensemble; the port defaults to 2181.
 *   <li>path: the node under which lock nodes live, default {@code /locksmith}; it may have several segments.
 *   <li>{@code sessionTimeoutMs} (default 30000): the session timeout asked of the server, which bounds it to 2 to 20
 *       ticks. A crashed holder's lock frees once its session expires.
 *   <li>{@code connectionTimeoutMs} (default 5000): how long opening the client, and any operation, waits for a
 *       connection before failing with {@link org.locksmith.lock.LockBackendException}; an acquire never waits past
 *       its deadline, and a queued waiter keeps its place while its session may survive (see the module README).
 * </ul>
 *
 * The client owns its {@link CuratorFramework} and closes it with the {@link org.locksmith.lock.LockClient}.
 *
 * <p>On an application's {@link CuratorFramework} ({@link #openClient}, as {@link ZooKeeperLocks#using(CuratorFramework,
 * String)} does) only the URL's path applies, as the root; both parameters configure the session, which the
 * application's client makes.
 */
public final class ZooKeeperLockProvider implements LockProvider {

    /** Used by {@link java.util.ServiceLoader}; does no I/O. */
    public ZooKeeperLockProvider() {}

    @Override
    public String name() {
        return "zookeeper";
    }

    @Override
    public Set<String> schemes() {
        return Set.of("zookeeper");
    }

    @Override
    public String defaultUrl() {
        return "zookeeper://127.0.0.1:2181";
    }

    @Override
    public Set<String> parameters() {
        return ZooKeeperSettings.PARAMETERS;
    }

    /**
     * Connects to the ensemble of {@code url} and waits for the first connection.
     *
     * @throws IllegalArgumentException if a setting is invalid (before any I/O)
     * @throws org.locksmith.lock.LockBackendException if no server answers within {@code connectionTimeoutMs}
     */
    @Override
    public LockBackend open(LockUrl url) {
        ZooKeeperSettings settings = ZooKeeperSettings.from(url);
        CuratorFramework curator = CuratorClients.open(settings);
        return new ZooKeeperLockBackend(curator, settings);
    }

    /** Curator's {@link CuratorFramework}. */
    @Override
    public Optional<Class<?>> applicationConnectionType() {
        return Optional.of(CuratorFramework.class);
    }

    /** None: both parameters configure the session, which the application's {@link CuratorFramework} makes. */
    @Override
    public Set<String> applicationConnectionParameters() {
        return Set.of();
    }

    /**
     * {@link ZooKeeperLocks#using(CuratorFramework, String)} on {@code connection}, a started {@link
     * CuratorFramework} that the client does not close, with the URL's path as the root ({@code /locksmith}
     * without one).
     *
     * @throws IllegalArgumentException if the path is not a valid root
     * @throws IllegalStateException if the CuratorFramework was not started
     * @throws org.locksmith.lock.LockBackendException if it does not connect within its connection timeout
     */
    @Override
    public LockClient openClient(LockUrl url, Object connection) {
        CuratorFramework curator = (CuratorFramework) connection;
        return url.path().isEmpty()
                ? ZooKeeperLocks.using(curator)
                : ZooKeeperLocks.using(curator, url.path().startsWith("/") ? url.path() : "/" + url.path());
    }
}
