package org.locksmith.lock.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.UUID;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.testservers.TestZooKeeper;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The starter on ZooKeeper: from the URL, and on the application's CuratorFramework. */
class ZooKeeperStarterTest {
    private static final String ROOT = "/boot-" + UUID.randomUUID();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(LocksmithAutoConfiguration.class, LocksmithHealthAutoConfiguration.class));

    @Test
    void opensItsOwnConnectionsFromTheUrl() {
        runner.withPropertyValues("locksmith.url=zookeeper://" + TestZooKeeper.sharedConnectString() + ROOT)
                .run(context -> {
                    LockClient client = context.getBean(LockClient.class);
                    assertThat(client.backend()).startsWith("zookeeper");
                    try (LockLease lease = client.lock("job").acquire(Duration.ofSeconds(5))) {
                        assertThat(lease.isValid()).isTrue();
                    }
                    assertThat(context.getBean(LocksmithHealthIndicator.class)
                                    .health()
                                    .getStatus())
                            .isEqualTo(Status.UP);
                });
    }

    @Test
    void usesTheApplicationsCuratorWhenAsked() {
        runner.withPropertyValues(
                        "locksmith.url=zookeeper://" + ROOT + "-app", "locksmith.use-application-connections=true")
                .withBean(
                        CuratorFramework.class,
                        () -> {
                            CuratorFramework curator = CuratorFrameworkFactory.newClient(
                                    TestZooKeeper.sharedConnectString(), new RetryNTimes(3, 100));
                            curator.start();
                            return curator;
                        },
                        d -> d.setDestroyMethodName("close"))
                .run(context -> {
                    LockClient client = context.getBean(LockClient.class);
                    CuratorFramework curator = context.getBean(CuratorFramework.class);
                    try (LockLease lease = client.lock("job").acquire(Duration.ofSeconds(5))) {
                        assertThat(lease.isValid()).isTrue();
                        assertThat(curator.checkExists().forPath(ROOT + "-app"))
                                .as("the locks live under the URL's path, through the application's Curator")
                                .isNotNull();
                    }
                });
    }
}
