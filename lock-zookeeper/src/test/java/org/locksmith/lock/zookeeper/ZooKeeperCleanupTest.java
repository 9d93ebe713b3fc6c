package org.locksmith.lock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.testservers.EmbeddedZooKeeper;

/**
 * Contract 16 at scale: after 1,000 keys are locked and released, no lock node is left, and the container reaper
 * (run every {@value EmbeddedZooKeeper#CONTAINER_CHECK_MS} ms on this private server instead of ZooKeeper's default
 * minute, through {@code znode.container.checkIntervalMs}) removes every empty lock parent. The lock root, and the
 * ancestors the client created for it, are persistent and stay: they may be the application's own nodes.
 */
class ZooKeeperCleanupTest {

    @Test
    void thousandKeysLeaveNothingBehindButTheirRoot() throws Exception {
        try (EmbeddedZooKeeper server = new EmbeddedZooKeeper();
                CuratorFramework admin = ZooKeeperTestSupport.admin(server.connectString())) {
            String root = "/cleanup/locks"; // neither node exists: the lock client creates both
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
            // The reaper deletes the empty key parents within a few intervals; it deletes at most
            // znode.container.maxPerMinute (10,000) per minute.
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> admin.getChildren().forPath(root).isEmpty());
            // The root and its ancestor are plain persistent nodes (a container's ephemeralOwner is
            // Long.MIN_VALUE), and outlive several more reaper passes.
            for (String node : new String[] {"/cleanup", root}) {
                Stat stat = admin.checkExists().forPath(node);
                assertThat(stat).as("%s exists", node).isNotNull();
                assertThat(stat.getEphemeralOwner())
                        .as("%s is persistent, not a container", node)
                        .isZero();
            }
            await().during(Duration.ofMillis(3L * EmbeddedZooKeeper.CONTAINER_CHECK_MS))
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> admin.checkExists().forPath(root) != null);
        }
    }

    /**
     * The server reaps at most {@code znode.container.maxPerMinute} (10,000) empty containers a minute, once a
     * minute by default: a service locking more than ~170 new keys a second (such as {@code order:<uuid>}) piles up
     * empty parents. The client deletes the parents of keys it released, once they are idle: here the reaper runs
     * only every ten minutes, and the parents are gone within seconds.
     */
    @Test
    void parentsOfReleasedKeysGoWithoutTheReaper() throws Exception {
        // -Dlocksmith.zk.cleanupKeys=50000 for the 50,000 keys (about four minutes here)
        int keys = Integer.getInteger("locksmith.zk.cleanupKeys", 1_000);
        try (EmbeddedZooKeeper server = new EmbeddedZooKeeper(600_000);
                CuratorFramework admin = ZooKeeperTestSupport.admin(server.connectString());
                LockClient client = Locks.open(server.url("/idle", 10_000, 5_000))) {
            for (int i = 0; i < keys; i++) {
                try (LockLease lease = client.lock("order:" + i).acquire(Duration.ofSeconds(5))) {
                    assertThat(lease.isValid()).isTrue();
                }
            }
            try (LockLease kept = client.lock("kept").acquire(Duration.ofSeconds(5))) {
                await().atMost(Duration.ofSeconds(15))
                        .pollInterval(Duration.ofMillis(200))
                        .until(() -> admin.getChildren().forPath("/idle").size() == 1);
                assertThat(admin.getChildren().forPath("/idle")).containsExactly("kept");
                assertThat(kept.isValid()).isTrue();
            }
        }
    }
}
