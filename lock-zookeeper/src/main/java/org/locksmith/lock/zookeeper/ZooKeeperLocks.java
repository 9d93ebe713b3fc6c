package org.locksmith.lock.zookeeper;

import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;
import org.locksmith.lock.zookeeper.internal.ZooKeeperLockBackend;
import org.locksmith.lock.zookeeper.internal.ZooKeeperSettings;

/**
 * ZooKeeper lock clients built on a {@link CuratorFramework} the application already has (with its own retry
 * policy, authentication, ACLs and namespace). For a URL, use {@link Locks#open(String)} with {@code zookeeper://}.
 *
 * <p>Semantics (see the module README): each acquire creates an ephemeral sequential node under a container node
 * per key; the lowest sequence holds; each waiter watches only its predecessor, so waiters are granted in arrival
 * order, one wake-up per release. The fencing token is the holder node's {@code czxid}, which only rises, also
 * across server restarts and leader changes. A lease is bound to the client's session: it is invalid while the
 * connection is SUSPENDED, valid again once its node is proved alive in the same session after the reconnection,
 * and lost (its {@code onLost} listeners fire) when the session ends or its node is gone.
 */
public final class ZooKeeperLocks {
    private ZooKeeperLocks() {}

    /**
     * A client whose locks live under {@value ZooKeeperSettings#DEFAULT_ROOT} (inside the client's namespace, if it
     * has one). Closing the returned client releases its leases but does not close {@code curator}. Operations wait
     * for a connection at most the client's connection timeout (an acquire never past its deadline), then fail with
     * {@link org.locksmith.lock.LockBackendException}; a queued waiter keeps its place longer, while its session may
     * survive. Each ZooKeeper call waits at most the connection timeout for its reply, whatever the client's retry
     * policy (which Curator applies to the call in the background). The root and any missing ancestors are
     * created as persistent nodes.
     *
     * @throws NullPointerException if curator is null
     * @throws IllegalStateException if curator was not started
     */
    public static LockClient using(CuratorFramework curator) {
        return using(curator, ZooKeeperSettings.DEFAULT_ROOT);
    }

    /**
     * A client whose locks live under {@code root}, such as {@code /app/locks}.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if root is not a valid ZooKeeper path below {@code /}
     * @throws IllegalStateException if curator was not started
     */
    public static LockClient using(CuratorFramework curator, String root) {
        Objects.requireNonNull(curator, "curator");
        Objects.requireNonNull(root, "root");
        ZooKeeperSettings settings = ZooKeeperSettings.ofClient(curator, root);
        int connectionMs = (int) settings.connectionTimeout().toMillis();
        String where = settings.connectString();
        // A lease is trusted for the session timeout the server negotiated, which Curator does not tell before the
        // first connection and does not expose as asked for: wait for that connection as a URL client does.
        if (curator.getState() == CuratorFrameworkState.STARTED
                && curator.getZookeeperClient().getLastNegotiatedSessionTimeoutMs() <= 0) {
            try {
                if (!curator.blockUntilConnected(connectionMs, TimeUnit.MILLISECONDS)) {
                    throw new LockBackendException("Could not connect to ZooKeeper at " + where + " within the"
                            + " client's connection timeout (" + connectionMs + " ms); check that the ensemble is"
                            + " running and reachable");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LockBackendException("Interrupted while connecting to ZooKeeper at " + where, e);
            }
        }
        return Locks.client(new ZooKeeperLockBackend(curator, settings));
    }
}
