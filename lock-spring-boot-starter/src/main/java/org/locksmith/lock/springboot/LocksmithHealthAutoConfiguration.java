package org.locksmith.lock.springboot;

import org.locksmith.lock.LockClient;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Auto-configuration of a {@link LocksmithHealthIndicator} (health contributor {@code locksmith}) for the
 * application's one {@link LockClient} bean, the starter's or its own. Only when Spring Boot's health API ({@code
 * spring-boot-health}, which actuator brings) is on the class path; {@code management.health.locksmith.enabled=false}
 * turns it off.
 */
@AutoConfiguration(after = LocksmithAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
@EnableConfigurationProperties(LocksmithProperties.class)
public class LocksmithHealthAutoConfiguration {

    /** Created by Spring. */
    public LocksmithHealthAutoConfiguration() {}

    // Nested, so that the annotations of spring-boot-health are read only once its classes are known to be there.
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnSingleCandidate(LockClient.class)
    @ConditionalOnEnabledHealthIndicator("locksmith")
    static class Indicator {

        @Bean
        @ConditionalOnMissingBean(name = "locksmithHealthIndicator")
        LocksmithHealthIndicator locksmithHealthIndicator(LockClient client, LocksmithProperties properties) {
            LocksmithProperties.Health health = properties.getHealth();
            return new LocksmithHealthIndicator(client, health.getKey(), health.getTimeout(), health.getLostWindow());
        }
    }
}
