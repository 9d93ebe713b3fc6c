package org.locksmith.lock.zookeeper;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;
import org.locksmith.lock.spi.LockUrl;
import org.locksmith.lock.testservers.TestZooKeeper;
import org.locksmith.lock.zookeeper.internal.ZooKeeperLockBackend;

/** Shared helpers of the ZooKeeper tests: opening clients, looking at the store, inflicting faults. */
final class ZooKeeperTestSupport {
    private ZooKeeperTestSupport() {}

    /** A root of its own for one test run, so that runs on a shared server never see each other's nodes. */
    static String uniqueRoot(String name) {
        return "/locksmith-test/" + name + "-" + Long.toHexString(System.nanoTime());
    }

    /** A plain Curator client for looking at and tampering with the store behind the lock clients' backs. */
    static CuratorFramework admin(String connectString) {
        CuratorFramework admin = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .sessionTimeoutMs(30_000)
                .connectionTimeoutMs(5_000)
                .retryPolicy(new RetryNTimes(20, 100))
                .build();
        admin.start();
        try {
            if (!admin.blockUntilConnected(10, TimeUnit.SECONDS)) {
                admin.close();
                throw new IllegalStateException("No ZooKeeper answers at " + connectString
                        + "; start one there or unset " + TestZooKeeper.ENVIRONMENT_VARIABLE
                        + " to use the embedded server");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        return admin;
    }

    /** The backend under each client opened by {@link #open}, for the tests and fault hooks that need its Curator. */
    private static final Map<LockClient, ZooKeeperLockBackend> BACKENDS = new ConcurrentHashMap<>();

    /** Like {@link Locks#open(String)}, through the provider (the SPI), remembering the backend. */
    static LockClient open(String url) {
        ZooKeeperLockBackend backend = (ZooKeeperLockBackend) new ZooKeeperLockProvider().open(LockUrl.parse(url));
        LockClient client = Locks.client(backend);
        BACKENDS.put(client, backend);
        return client;
    }

    static ZooKeeperLockBackend backendOf(LockClient client) {
        ZooKeeperLockBackend backend = BACKENDS.get(client);
        if (backend == null) {
            throw new IllegalArgumentException(client + " was not opened by ZooKeeperTestSupport.open");
        }
        return backend;
    }

    /** Lock nodes and parent of {@code key}: 1 for the parent plus one per waiter or holder node; 0 if none. */
    static OptionalInt storeEntries(CuratorFramework admin, String lockPath) {
        try {
            Stat stat = admin.checkExists().forPath(lockPath);
            return OptionalInt.of(stat == null ? 0 : 1 + stat.getNumChildren());
        } catch (Exception e) {
            throw new IllegalStateException("Could not count the nodes of " + lockPath + ": " + e, e);
        }
    }

    /** Deletes every node of one lock, as an operator might. */
    static void deleteLockState(CuratorFramework admin, String lockPath) {
        try {
            admin.delete().deletingChildrenIfNeeded().forPath(lockPath);
        } catch (KeeperException.NoNodeException e) {
            // nothing there
        } catch (Exception e) {
            throw new IllegalStateException("Could not delete " + lockPath + ": " + e, e);
        }
    }

    /** Children of a lock's parent node; empty if the parent is gone. */
    static List<String> children(CuratorFramework admin, String lockPath) {
        try {
            return admin.getChildren().forPath(lockPath);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Ends the session of {@code curator} on the server's side, the way ZooKeeper's own tests do: a second handle
     * attaches to the same session and closes it. The server deletes the session's ephemeral nodes at once and
     * drops the first handle's connection; that handle learns of the expiry when it reconnects.
     */
    static void expireSession(CuratorFramework curator, String connectString) {
        try {
            ZooKeeper zk = curator.getZookeeperClient().getZooKeeper();
            CountDownLatch connected = new CountDownLatch(1);
            ZooKeeper twin = new ZooKeeper(
                    connectString,
                    10_000,
                    event -> {
                        if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                            connected.countDown();
                        }
                    },
                    zk.getSessionId(),
                    zk.getSessionPasswd());
            try {
                if (!connected.await(10, TimeUnit.SECONDS)) {
                    throw new IllegalStateException(
                            "Could not attach to session 0x" + Long.toHexString(zk.getSessionId()));
                }
            } finally {
                twin.close();
            }
        } catch (Exception e) {
            throw new IllegalStateException("Could not expire the session: " + e, e);
        }
    }

    static Duration millis(long ms) {
        return Duration.ofMillis(ms);
    }
}
