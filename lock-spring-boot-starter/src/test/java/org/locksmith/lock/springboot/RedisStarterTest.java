package org.locksmith.lock.springboot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.Locks;
import org.locksmith.lock.micrometer.LockMetrics;
import org.locksmith.lock.spi.LockUrl;
import org.locksmith.lock.testservers.TestRedis;
import org.locksmith.lock.testsupport.StallingProxy;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.UnifiedJedis;

/** The starter on Redis, in application contexts started by {@link ApplicationContextRunner}. */
class RedisStarterTest {
    private static final String PREFIX = "boot-" + UUID.randomUUID() + ":";

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    LocksmithAutoConfiguration.class,
                    LocksmithHealthAutoConfiguration.class,
                    LocksmithMetricsAutoConfiguration.class));

    private static String url() {
        return TestRedis.sharedLockUrl("prefix=" + PREFIX);
    }

    @Test
    void noUrlNoClient() {
        runner.run(context -> assertThat(context).doesNotHaveBean(LockClient.class));
    }

    @Test
    void backsOffWhenTheApplicationDefinesItsOwnClient() {
        try (LockClient own = Locks.open(url())) {
            runner.withPropertyValues("locksmith.url=" + url())
                    .withBean("ownClient", LockClient.class, () -> own, d -> d.setDestroyMethodName(""))
                    .run(context -> {
                        assertThat(context).hasSingleBean(LockClient.class);
                        assertThat(context.getBean(LockClient.class)).isSameAs(own);
                        assertThat(context.getBean(LocksmithHealthIndicator.class)
                                        .health()
                                        .getStatus())
                                .as("the health indicator serves the application's own client too")
                                .isEqualTo(Status.UP);
                    });
        }
    }

    @Test
    void theClientIsClosedWithTheContext() {
        AtomicReference<LockClient> seen = new AtomicReference<>();
        runner.withPropertyValues("locksmith.url=" + url()).run(context -> {
            LockClient client = context.getBean(LockClient.class);
            seen.set(client);
            client.lock("close-me").acquire(Duration.ofSeconds(5));
        });
        assertThatThrownBy(() -> seen.get().lock("close-me"))
                .as("after the context closed")
                .isInstanceOf(IllegalStateException.class);
        try (LockClient other = Locks.open(url())) {
            assertThat(other.lock("close-me").tryAcquire())
                    .as("closing the context released the lease")
                    .hasValueSatisfying(LockLease::release);
        }
    }

    @Test
    void usesTheApplicationsUnifiedJedisWhenAsked() {
        LockUrl redis = LockUrl.parse(TestRedis.sharedUrl());
        HostAndPort at = new HostAndPort(
                redis.hosts().get(0).host(), redis.hosts().get(0).port(6379));
        runner.withPropertyValues(
                        "locksmith.url=redis://?prefix=" + PREFIX + "&leaseMs=4000",
                        "locksmith.use-application-connections=true")
                .withBean(
                        UnifiedJedis.class,
                        () -> RedisClient.builder().hostAndPort(at).build(),
                        d -> d.setDestroyMethodName("close"))
                .run(context -> {
                    LockClient client = context.getBean(LockClient.class);
                    UnifiedJedis jedis = context.getBean(UnifiedJedis.class);
                    try (LockLease lease = client.lock("app-jedis").acquire(Duration.ofSeconds(5))) {
                        assertThat(jedis.keys("*" + PREFIX + "*"))
                                .as("the lock is in the application's Redis under the URL's prefix")
                                .isNotEmpty();
                        assertThat(lease.isValid()).isTrue();
                    }
                });
    }

    @Test
    void rejectsAConnectionParameterWithTheApplicationsConnections() {
        runner.withPropertyValues("locksmith.url=redis://?timeoutMs=500", "locksmith.use-application-connections=true")
                .withBean(UnifiedJedis.class, () -> RedisClient.builder().build())
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("timeoutMs does not apply"));
    }

    @Test
    void aStoreDownAtStartupFailsTheStart() throws Exception {
        int closedPort;
        try (var socket = new java.net.ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        runner.withPropertyValues(
                        "locksmith.url=redis://127.0.0.1:" + closedPort + "?connectTimeoutMs=300&timeoutMs=300")
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .satisfies(e -> assertThat(causes(e)).anyMatch(LockBackendException.class::isInstance)));
    }

    @Test
    void healthTurnsDownWhenTheStoreStopsAnsweringAndUpWhenItReturns() throws Exception {
        LockUrl redis = LockUrl.parse(TestRedis.sharedUrl());
        try (StallingProxy proxy = new StallingProxy(redis.hosts().get(0).port(6379))) {
            runner.withPropertyValues(
                            "locksmith.url=redis://127.0.0.1:" + proxy.port() + "?prefix=" + PREFIX
                                    + "&timeoutMs=400&connectTimeoutMs=400",
                            "locksmith.health.timeout=600ms")
                    .run(context -> {
                        LocksmithHealthIndicator health = context.getBean(LocksmithHealthIndicator.class);
                        assertThat(health.health().getStatus()).isEqualTo(Status.UP);
                        proxy.stall();
                        Health down = health.health();
                        assertThat(down.getStatus()).isEqualTo(Status.DOWN);
                        assertThat(down.getDetails()).containsKeys("error", "backend", "heldLeases");
                        proxy.resume();
                        Awaitility.await()
                                .atMost(Duration.ofSeconds(5))
                                .until(() -> health.health().getStatus().equals(Status.UP));
                    });
        }
    }

    @Test
    void healthAndMetricsFollowTheClassPathAndTheirSwitches() {
        ApplicationContextRunner withRegistry = runner.withPropertyValues("locksmith.url=" + url())
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new);
        withRegistry.run(context -> assertThat(context)
                .hasSingleBean(LocksmithHealthIndicator.class)
                .hasSingleBean(LockMetrics.class));
        withRegistry
                .withClassLoader(new FilteredClassLoader(HealthIndicator.class, LockMetrics.class))
                .run(context -> assertThat(context)
                        .as("without spring-boot-health and lock-micrometer")
                        .hasSingleBean(LockClient.class)
                        .doesNotHaveBean(LocksmithHealthIndicator.class)
                        .doesNotHaveBean(LockMetrics.class));
        withRegistry
                .withPropertyValues("locksmith.metrics.enabled=false", "management.health.locksmith.enabled=false")
                .run(context -> assertThat(context)
                        .hasSingleBean(LockClient.class)
                        .doesNotHaveBean(LocksmithHealthIndicator.class)
                        .doesNotHaveBean(LockMetrics.class));
        runner.withPropertyValues("locksmith.url=" + url())
                .run(context ->
                        assertThat(context).as("without a MeterRegistry bean").doesNotHaveBean(LockMetrics.class));
    }

    @Test
    void aMissingBackendModuleIsNamed() {
        runner.withClassLoader(new FilteredClassLoader("org.locksmith.lock.redis"))
                .withPropertyValues("locksmith.url=redis://?leaseMs=5000", "locksmith.use-application-connections=true")
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("org.locksmith:lock-redis"));
    }

    @Test
    void healthCountsLeasesLostRecently() {
        runner.withPropertyValues("locksmith.url=" + url() + "&leaseMs=600").run(context -> {
            LockClient client = context.getBean(LockClient.class);
            LocksmithHealthIndicator health = context.getBean(LocksmithHealthIndicator.class);
            LockLease lease = client.lock("lost-lease").acquire(Duration.ofSeconds(5));
            try (Jedis redis = new Jedis(URI.create(TestRedis.sharedUrl()))) {
                Set<String> keys = redis.keys("*" + PREFIX + "*lock:lost-lease");
                assertThat(keys).as("the lock in Redis").hasSize(1);
                redis.del(keys.iterator().next());
            }
            Awaitility.await()
                    .atMost(Duration.ofSeconds(5))
                    .untilAsserted(() -> assertThat(health.health().getDetails())
                            .containsEntry("lostRecently", 1)
                            .containsEntry("heldLeases", 1));
            assertThat(health.health().getStatus())
                    .as("a loss alone does not turn the store DOWN")
                    .isEqualTo(Status.UP);
            assertThatThrownBy(lease::release).isInstanceOf(LockLostException.class);
            assertThat(health.health().getDetails()).containsEntry("heldLeases", 0);
        });
    }

    private static java.util.List<Throwable> causes(Throwable e) {
        java.util.List<Throwable> all = new java.util.ArrayList<>();
        for (Throwable t = e; t != null && !all.contains(t); t = t.getCause()) {
            all.add(t);
        }
        return all;
    }
}
