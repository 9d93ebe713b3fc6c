package org.locksmith.lock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.LockTimeoutException;
import org.locksmith.lock.Locks;
import org.locksmith.lock.testservers.TestRedis;
import redis.clients.jedis.Jedis;

/** The meters of a real Redis client: waits, holds, timeouts, a loss, and the held-leases gauge. */
class LockMetricsTest {

    @Test
    void waitsHoldsTimeoutsAndLossesAreMetered() throws Exception {
        String prefix = "metrics-" + UUID.randomUUID() + ":";
        String url = TestRedis.sharedUrl() + "?prefix=" + prefix + "&leaseMs=1000";
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (LockClient locks = Locks.open(url)) {
            LockMetrics.builder(registry).keyTag(k -> k.split(":")[0]).bind(locks);
            LockLease held = locks.lock("orders:1").acquire(Duration.ofSeconds(5));
            assertThat(registry.get("locksmith.lock.leases.held")
                            .tag("key", "orders")
                            .gauge()
                            .value())
                    .isEqualTo(1);
            CompletableFuture<Throwable> other = CompletableFuture.supplyAsync(() -> {
                try {
                    locks.lock("orders:1").acquire(Duration.ofMillis(100));
                    return null;
                } catch (Throwable t) {
                    return t;
                }
            });
            assertThat(other.get(10, TimeUnit.SECONDS)).isInstanceOf(LockTimeoutException.class);
            held.release();

            // a lease whose state is deleted behind it: the renewal finds it gone
            LockLease doomed = locks.lock("jobs:nightly").acquire(Duration.ofSeconds(5));
            try (Jedis redis = new Jedis(java.net.URI.create(TestRedis.sharedUrl()))) {
                redis.keys(prefix + "*").forEach(redis::del);
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> !doomed.isValid());
            assertThatThrownBy(doomed::release).isInstanceOf(LockLostException.class);
        }
        String backend = "redis";
        assertThat(registry.get("locksmith.lock.wait")
                        .tags("backend", backend, "key", "orders", "outcome", "acquired")
                        .timer()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get("locksmith.lock.wait")
                        .tags("key", "orders", "outcome", "timed_out")
                        .timer()
                        .totalTime(TimeUnit.MILLISECONDS))
                .isGreaterThanOrEqualTo(100);
        assertThat(registry.get("locksmith.lock.held")
                        .tags("key", "orders", "lost", "false")
                        .timer()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get("locksmith.lock.lost")
                        .tag("key", "jobs")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get("locksmith.lock.held")
                        .tags("key", "jobs", "lost", "true")
                        .timer()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get("locksmith.lock.leases.held")
                        .tag("key", "orders")
                        .gauge()
                        .value())
                .isZero();
        assertThat(registry.get("locksmith.lock.leases.held")
                        .tag("key", "jobs")
                        .gauge()
                        .value())
                .isZero();
    }
}
