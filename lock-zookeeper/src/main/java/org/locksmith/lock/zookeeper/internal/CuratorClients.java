package org.locksmith.lock.zookeeper.internal;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryUntilElapsed;
import org.locksmith.lock.LockBackendException;

/** Opens the Curator client behind a {@code zookeeper://} URL. */
public final class CuratorClients {
    private static final AtomicInteger THREADS = new AtomicInteger();

    private CuratorClients() {}

    /**
     * Starts a client and waits for its first connection.
     *
     * @throws LockBackendException if ZooKeeper cannot be reached within the connection timeout
     */
    public static CuratorFramework open(ZooKeeperSettings settings) {
        int connectionMs = (int) settings.connectionTimeout().toMillis();
        CuratorFramework curator = CuratorFrameworkFactory.builder()
                .connectString(settings.connectString())
                .sessionTimeoutMs((int) settings.sessionTimeout().toMillis())
                // The backend waits up to connectionTimeoutMs for a connection before each operation, and at most
                // as long for each call's reply, so Curator's own per-attempt wait only covers a connection lost in
                // the middle of a call: half the budget, and retries only in its first quarter (a leader change
                // drops the connection and the retry waits for the reconnection), so that a retried call can still
                // answer within the backend's wait.
                .connectionTimeoutMs(Math.max(50, connectionMs / 2))
                .retryPolicy(new RetryUntilElapsed(connectionMs / 4, 50))
                .threadFactory(CuratorClients::daemon)
                .build();
        curator.start();
        boolean connected;
        try {
            connected = curator.blockUntilConnected(connectionMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            curator.close();
            Thread.currentThread().interrupt();
            throw new LockBackendException("Interrupted while connecting to ZooKeeper at " + settings.connectString());
        }
        if (!connected) {
            curator.close();
            throw new LockBackendException("Could not connect to ZooKeeper at " + settings.connectString()
                    + " within " + ZooKeeperSettings.CONNECTION_TIMEOUT + "=" + connectionMs
                    + "; check that the ensemble is running and reachable, or raise the timeout");
        }
        return curator;
    }

    private static Thread daemon(Runnable task) {
        Thread t = new Thread(task, "locksmith-zookeeper-" + THREADS.incrementAndGet());
        t.setDaemon(true);
        return t;
    }
}
