package org.locksmith.lock.zookeeper.internal;

import java.time.Duration;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.curator.framework.CuratorFramework;
import org.locksmith.lock.spi.LockUrl;

/**
 * What a ZooKeeper lock backend is built from: the settings of a {@code zookeeper://} URL, validated before
 * any I/O ({@link #from}), or those of a Curator client the application already has ({@link #ofClient}).
 *
 * @param connectString the ensemble, as ZooKeeper's client takes it ({@code host1:2181,host2:2181}); it also names
 *     the ensemble in messages
 * @param root the lock root node ({@code /locksmith} when the URL has no path)
 * @param sessionTimeout the session timeout the client asks for (the server bounds it to 2..20 ticks), used until
 *     the server has negotiated one; {@link Duration#ZERO} if unknown (an application's client)
 * @param connectionTimeout how long an operation waits for a connection before it fails
 * @param ownsClient whether the backend closes the Curator client when it is closed: true for a client it opened
 *     from a URL, false for the application's own
 */
public record ZooKeeperSettings(
        String connectString, String root, Duration sessionTimeout, Duration connectionTimeout, boolean ownsClient) {

    public static final String SESSION_TIMEOUT = "sessionTimeoutMs";
    public static final String CONNECTION_TIMEOUT = "connectionTimeoutMs";
    public static final Set<String> PARAMETERS = Set.of(SESSION_TIMEOUT, CONNECTION_TIMEOUT);

    public static final int DEFAULT_PORT = 2181;
    public static final String DEFAULT_ROOT = "/locksmith";
    public static final Duration DEFAULT_SESSION_TIMEOUT = Duration.ofSeconds(30);
    public static final Duration DEFAULT_CONNECTION_TIMEOUT = Duration.ofSeconds(5);

    /**
     * Reads and checks {@code url}.
     *
     * @throws IllegalArgumentException naming the setting and what to change
     */
    public static ZooKeeperSettings from(LockUrl url) {
        if (url.hosts().isEmpty()) {
            throw new IllegalArgumentException("Lock URL " + url
                    + " names no ZooKeeper server; use zookeeper://host1:2181,host2:2181/root?sessionTimeoutMs=30000");
        }
        if (url.user().isPresent() || url.password().isPresent()) {
            throw new IllegalArgumentException("Lock URL " + url
                    + " has a user or password, which the zookeeper backend does not support; configure"
                    + " authentication on a CuratorFramework and use ZooKeeperLocks.using(curator)");
        }
        String connectString = url.hosts().stream()
                .map(h -> new LockUrl.HostAndPort(h.host(), h.port(DEFAULT_PORT)).toString())
                .collect(Collectors.joining(","));
        String root = url.path().isEmpty() ? DEFAULT_ROOT : LockNodes.validateRoot(url.path());
        Duration session = url.millisParameter(
                SESSION_TIMEOUT, DEFAULT_SESSION_TIMEOUT, Duration.ofMillis(100), Duration.ofHours(1));
        Duration connection = url.millisParameter(
                CONNECTION_TIMEOUT, DEFAULT_CONNECTION_TIMEOUT, Duration.ofMillis(100), Duration.ofMinutes(10));
        return new ZooKeeperSettings(connectString, root, session, connection, true);
    }

    /**
     * The settings of a client the application already has, which the backend does not close: its connection
     * string and connection timeout, and {@code root} as given (the backend validates it). No I/O.
     */
    public static ZooKeeperSettings ofClient(CuratorFramework curator, String root) {
        int connectionMs = curator.getZookeeperClient().getConnectionTimeoutMs();
        String where = curator.getZookeeperClient().getCurrentConnectionString();
        return new ZooKeeperSettings(where, root, Duration.ZERO, Duration.ofMillis(connectionMs), false);
    }
}
