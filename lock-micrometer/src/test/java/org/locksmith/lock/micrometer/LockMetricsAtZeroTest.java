package org.locksmith.lock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;
import org.locksmith.lock.testservers.TestRedis;

/**
 * The counters an alert watches exist at zero as soon as a client is bound, before any event: a scrape (Prometheus)
 * shows them, so the first loss or error is an increase and not a series appearing out of nothing.
 */
class LockMetricsAtZeroTest {

    @Test
    void lossErrorAndRenewalCountersAndTheGaugeAreRegisteredAtZeroOnBind() {
        String url = TestRedis.sharedUrl() + "?prefix=metrics-zero-" + UUID.randomUUID() + ":";
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (LockClient locks = Locks.open(url)) {
            LockMetrics.bind(locks, registry);
            String backend = locks.backend();
            assertThat(registry.get("locksmith.lock.lost")
                            .tag("backend", backend)
                            .counter()
                            .count())
                    .isZero();
            assertThat(registry.get("locksmith.lock.renewal.failures")
                            .tag("backend", backend)
                            .counter()
                            .count())
                    .isZero();
            for (String operation : new String[] {"acquire", "release"}) {
                assertThat(registry.get("locksmith.lock.backend.errors")
                                .tags("backend", backend, "operation", operation)
                                .counter()
                                .count())
                        .as(operation)
                        .isZero();
            }
            assertThat(registry.get("locksmith.lock.leases.held")
                            .tag("backend", backend)
                            .gauge()
                            .value())
                    .isZero();
        }
    }
}
