package org.locksmith.lock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;

/**
 * Contract 16 at scale: after 1,000 keys are locked and released, no lock node is left, and the container reaper
 * (run every {@value EmbeddedZooKeeper#CONTAINER_CHECK_MS} ms on this private server instead of ZooKeeper's default
 * minute, through {@code znode.container.checkIntervalMs}) removes every empty lock parent, and then the root.
 */
class ZooKeeperCleanupTest {

    @Test
    void thousandKeysLeaveNothingBehind() throws Exception {
        try (EmbeddedZooKeeper server = new EmbeddedZooKeeper();
                CuratorFramework admin = ZooKeeperTestSupport.admin(server.connectString())) {
            String root = "/cleanup/locks";
            admin.create().creatingParentsIfNeeded().forPath("/cleanup"); // a persistent anchor to look under
            try (LockClient client = Locks.open(server.url(root, 10_000, 5_000))) {
                for (int i = 0; i < 1_000; i++) {
                    try (LockLease lease = client.lock("key-" + i).acquire(Duration.ofSeconds(5))) {
                        assertThat(lease.isValid()).isTrue();
                    }
                }
                // No lock node (ephemeral sequential child) is left under any parent, right after the releases
                // (the reaper may already be deleting parents while we look: a vanished one counts as empty).
                long lockNodes = 0;
                for (String parent : ZooKeeperTestSupport.children(admin, root)) {
                    lockNodes += ZooKeeperTestSupport.children(admin, root + "/" + parent)
                            .size();
                }
                assertThat(lockNodes).isZero();
            }
            // The reaper deletes empty containers (the key parents, then the root, itself a container) within a
            // few intervals; it deletes at most znode.container.maxPerMinute (10,000) per minute.
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> admin.checkExists().forPath(root) == null);
            assertThat(admin.getChildren().forPath("/cleanup")).isEmpty();
        }
    }
}
