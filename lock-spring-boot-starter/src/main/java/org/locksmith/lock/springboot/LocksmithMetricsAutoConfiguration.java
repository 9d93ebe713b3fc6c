package org.locksmith.lock.springboot;

import io.micrometer.core.instrument.MeterRegistry;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.micrometer.LockMetrics;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Binds {@code lock-micrometer}'s {@link LockMetrics} to the application's one {@link LockClient} bean and its {@link
 * MeterRegistry} bean, when both modules are on the class path. {@code locksmith.metrics.enabled=false} turns it off;
 * a {@code LockMetrics} bean of the application's own (say, with a key tag) replaces it.
 */
// After Boot's meter registry auto-configurations, so that the registry they define is seen.
@AutoConfiguration(
        after = LocksmithAutoConfiguration.class,
        afterName = {
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration"
        })
@ConditionalOnClass(name = {"org.locksmith.lock.micrometer.LockMetrics", "io.micrometer.core.instrument.MeterRegistry"})
@ConditionalOnProperty(prefix = "locksmith.metrics", name = "enabled", matchIfMissing = true)
public class LocksmithMetricsAutoConfiguration {

    /** Created by Spring. */
    public LocksmithMetricsAutoConfiguration() {}

    // Nested, so that LockMetrics and MeterRegistry are loaded only once they are known to be there.
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnSingleCandidate(LockClient.class)
    @ConditionalOnBean(MeterRegistry.class)
    static class Binding {

        @Bean
        @ConditionalOnMissingBean(LockMetrics.class)
        LockMetrics locksmithLockMetrics(LockClient client, MeterRegistry registry) {
            return LockMetrics.bind(client, registry);
        }
    }
}
