package org.locksmith.lock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.spi.LockUrl;
import org.locksmith.lock.testservers.TestZooKeeper;

/** {@link ZooKeeperLockProvider} on an application's {@link CuratorFramework}, against the test server. */
class ZooKeeperLockProviderTest {
    private static final String ROOT = "/provider-" + UUID.randomUUID();

    @Test
    void opensOnTheApplicationsCuratorUnderTheUrlsPath() throws Exception {
        assertThat(new ZooKeeperLockProvider().applicationConnectionType()).contains(CuratorFramework.class);
        try (CuratorFramework curator =
                CuratorFrameworkFactory.newClient(TestZooKeeper.sharedConnectString(), new RetryNTimes(3, 100))) {
            curator.start();
            try (LockClient client = Locks.open("zookeeper://" + ROOT, curator);
                    LockLease lease = client.lock("job").acquire(Duration.ofSeconds(5))) {
                assertThat(lease.isValid()).isTrue();
                assertThat(curator.checkExists().forPath(ROOT))
                        .as("the URL's path is the root")
                        .isNotNull();
            }
            assertThat(curator.getState())
                    .as("closing the lock client leaves the application's open")
                    .isEqualTo(CuratorFrameworkState.STARTED);
        }
    }

    @Test
    void aSessionParameterIsRejectedBeforeAnyIo() {
        AtomicInteger asked = new AtomicInteger();
        assertThatThrownBy(() -> Locks.open(
                        new ZooKeeperLockProvider(), LockUrl.parse("zookeeper:///x?sessionTimeoutMs=10000"), () -> {
                            asked.incrementAndGet();
                            return CuratorFrameworkFactory.newClient("127.0.0.1:1", new RetryNTimes(0, 1));
                        }))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("sessionTimeoutMs does not apply on the application's CuratorFramework")
                .hasMessageContaining("Parameters that apply: none");
        assertThat(asked).as("the connection is not even asked for").hasValue(0);
    }
}
