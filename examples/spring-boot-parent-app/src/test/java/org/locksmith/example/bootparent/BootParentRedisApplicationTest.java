package org.locksmith.example.bootparent;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.testservers.TestRedis;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import redis.clients.jedis.Jedis;

/**
 * The application, built on Spring Boot's parent, against the tests' Redis ({@code LOCKSMITH_TEST_REDIS_URL}, else one
 * started for the tests): it starts, and its {@link LockClient} takes and releases a lock.
 */
@SpringBootTest
class BootParentRedisApplicationTest {
    private static final String PREFIX = "boot-parent-" + UUID.randomUUID() + ":";

    // restartHoldOffMs=0: a Redis the tests start would otherwise grant nothing for its first lease time (the
    // backend's guard against a restart that forgot the locks it held).
    @DynamicPropertySource
    static void locksmith(DynamicPropertyRegistry registry) {
        registry.add("locksmith.url", () -> TestRedis.sharedUrl() + "?prefix=" + PREFIX + "&restartHoldOffMs=0");
    }

    @Autowired
    LockClient locks;

    @Test
    void startsAndTakesALockOnRedis() throws InterruptedException {
        assertThat(locks.backend()).startsWith("redis");
        try (LockLease lease = locks.lock("job").acquire(Duration.ofSeconds(5))) {
            assertThat(lease.isValid()).isTrue();
            assertThat(locks.lock("job").tryAcquireDetached())
                    .as("a second holder is refused while the first holds the lock")
                    .isEmpty();
        }
        try (LockLease again = locks.lock("job").acquire(Duration.ofSeconds(5))) {
            assertThat(again.isValid()).as("free again after the release").isTrue();
        }
    }

    @Test
    void runsOnTheJedisThePomSets() {
        assertThat(
                        Jedis.class.getPackage().getImplementationVersion() == null
                                ? jedisVersionFromPom()
                                : Jedis.class.getPackage().getImplementationVersion())
                .as("jedis.version=8.0.2 in this pom replaces the Jedis 7.0 Spring Boot manages")
                .startsWith("8.");
    }

    private static String jedisVersionFromPom() {
        try (var in =
                Jedis.class.getClassLoader().getResourceAsStream("META-INF/maven/redis.clients/jedis/pom.properties")) {
            var properties = new java.util.Properties();
            properties.load(in);
            return properties.getProperty("version");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
