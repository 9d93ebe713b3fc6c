package org.locksmith.lock.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.testservers.TestRedis;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A real Spring Boot application ({@code @SpringBootTest}, every auto-configuration on the class path) with {@code
 * locksmith.url} pointing at the test Redis: the client bean takes locks, its health is UP with details, and its
 * lock metrics reach the application's registry.
 */
@SpringBootTest(classes = RedisStarterApplicationTest.Application.class)
class RedisStarterApplicationTest {
    private static final String PREFIX = "boot-app-" + UUID.randomUUID() + ":";

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class Application {
        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    @DynamicPropertySource
    static void locksmith(DynamicPropertyRegistry registry) {
        registry.add("locksmith.url", () -> TestRedis.sharedLockUrl("prefix=" + PREFIX + "&leaseMs=5000"));
    }

    @Autowired
    LockClient client;

    @Autowired
    LocksmithHealthIndicator health;

    @Autowired
    MeterRegistry meters;

    @Test
    void theClientBeanTakesALockAndHealthAndMetricsSeeIt() throws Exception {
        assertThat(client.backend()).startsWith("redis");
        try (LockLease lease = client.lock("orders:42").acquire(Duration.ofSeconds(5))) {
            assertThat(lease.isValid()).isTrue();

            Health up = health.health();
            assertThat(up.getStatus()).isEqualTo(Status.UP);
            assertThat(up.getDetails())
                    .containsEntry("probe", "granted")
                    .containsEntry("heldLeases", 1)
                    .containsEntry("lostRecently", 0)
                    .containsKey("backend");

            assertThat(meters.get("locksmith.lock.leases.held").gauge().value())
                    .as("lock-micrometer bound to the application's MeterRegistry")
                    .isEqualTo(1.0);
        }
        assertThat(health.health().getDetails()).containsEntry("heldLeases", 0);
        assertThat(meters.get("locksmith.lock.held").timer().count())
                .as("the lease, and the two health probes (the probe's key is a lock like any other to the metrics)")
                .isEqualTo(3);
    }
}
