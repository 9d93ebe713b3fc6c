package org.locksmith.lock.bench.contenders;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.locksmith.lock.bench.StoreKind;
import org.locksmith.lock.bench.Stores;

/** Apache Curator's {@code InterProcessMutex}, on a Curator client with the same session timeout as ours (30 s). */
public final class CuratorContender extends Peer {

    public CuratorContender() {
        super("curator-mutex", StoreKind.ZOOKEEPER);
    }

    @Override
    public String description() {
        return "Apache Curator " + CuratorFramework.class.getPackage().getImplementationVersion()
                + " InterProcessMutex (30 s session)";
    }

    @Override
    public Client open(Stores stores, Duration lease) throws InterruptedException {
        CuratorFramework curator = CuratorFrameworkFactory.builder()
                .connectString(stores.zookeeperConnect())
                .sessionTimeoutMs(30_000)
                .connectionTimeoutMs(5_000)
                .retryPolicy(new ExponentialBackoffRetry(100, 3))
                .build();
        curator.start();
        if (!curator.blockUntilConnected(10, TimeUnit.SECONDS)) {
            curator.close();
            throw new IllegalStateException("Curator could not connect to " + stores.zookeeperConnect());
        }
        String root = "/lsbench-" + stores.runId() + "-curator/";
        return new Client() {
            @Override
            public Handle handle(String key) {
                InterProcessMutex mutex = new InterProcessMutex(curator, root + key);
                return new Handle() {
                    @Override
                    public void lock() throws Exception {
                        if (!mutex.acquire(GRANT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                            throw new IllegalStateException(
                                    name() + " was not granted " + key + " within " + GRANT_TIMEOUT.toSeconds() + " s");
                        }
                    }

                    @Override
                    public void unlock() throws Exception {
                        mutex.release();
                    }
                };
            }

            @Override
            public void close() {
                curator.close();
            }
        };
    }
}
