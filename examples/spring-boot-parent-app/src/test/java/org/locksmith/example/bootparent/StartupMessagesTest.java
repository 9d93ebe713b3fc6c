package org.locksmith.example.bootparent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.springboot.LocksmithAutoConfiguration;
import org.locksmith.lock.testservers.PrivateRedis;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * What an application's start-up log says about Locksmith, as Spring Boot prints it (its logging system, logback):
 * a missing {@code locksmith.url}, and which store the client connected to.
 */
@ExtendWith(OutputCaptureExtension.class)
class StartupMessagesTest {

    /** An application with a component that needs the starter's client. */
    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(LocksmithAutoConfiguration.class)
    static class NeedsLocks {
        @Bean
        String ordersJob(LockClient locks) {
            return "orders on " + locks.backend();
        }
    }

    // spring.config.name: not this module's application.properties, which sets locksmith.url
    private static SpringApplicationBuilder application(String... properties) {
        return new SpringApplicationBuilder(NeedsLocks.class)
                .web(WebApplicationType.NONE)
                .properties("spring.config.name=startup-messages-test")
                .properties(properties);
    }

    @Test
    void aStartWithoutLocksmithUrlNamesThePropertyAndItsAlternatives(CapturedOutput output) {
        assertThatThrownBy(() -> application().run())
                .hasRootCauseInstanceOf(org.springframework.beans.factory.NoSuchBeanDefinitionException.class);
        assertThat(output.toString())
                .contains("APPLICATION FAILED TO START")
                .contains("the property locksmith.url is set, and it is not set")
                .contains("LOCKSMITH_URL")
                .contains("locksmith.use-application-connections=true")
                .contains("lock-redis");
    }

    @Test
    void theStartLogsTheBackendAndTheUrlWithoutItsPassword(CapturedOutput output) throws Exception {
        String password = "s3cret-not-for-logs";
        try (PrivateRedis redis = PrivateRedis.startWithPassword(password);
                ConfigurableApplicationContext context = application("locksmith.url=redis://:" + password
                                + "@127.0.0.1:" + redis.port() + "?restartHoldOffMs=0")
                        .run()) {
            try (LockLease lease = context.getBean(LockClient.class).lock("k").acquire(Duration.ofSeconds(5))) {
                assertThat(lease.isValid()).isTrue();
            }
        }
        assertThat(output.toString())
                .contains("INFO")
                .contains("Locksmith lock client open: backend redis, store redis://:****@127.0.0.1:")
                .doesNotContain(password);
    }
}
