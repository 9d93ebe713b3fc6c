package org.locksmith.lock.springboot;

import org.locksmith.lock.LockClient;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;

/**
 * Explains a start that failed for want of a {@link LockClient} bean while {@code locksmith.url} is not set: Spring's
 * own analysis would only say that a bean of that type is required. Names the property, the environment variable and
 * the alternatives. Runs before Spring Boot's generic analyzer; any other failure is left to the others.
 */
final class LocksmithUrlMissingFailureAnalyzer extends AbstractFailureAnalyzer<NoSuchBeanDefinitionException>
        implements Ordered {
    private final Environment environment;

    /**
     * Created by Spring Boot (through {@code META-INF/spring.factories}) when a start fails.
     *
     * @param environment the failed application's environment, where {@code locksmith.url} is looked up
     */
    LocksmithUrlMissingFailureAnalyzer(Environment environment) {
        this.environment = environment;
    }

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, NoSuchBeanDefinitionException cause) {
        Class<?> type = cause.getBeanType();
        if (type == null || !LockClient.class.isAssignableFrom(type)) {
            return null;
        }
        String url = environment.getProperty("locksmith.url");
        if (url != null && !url.isBlank()) {
            return null; // set: the client failed for another reason, which the other analyzers report
        }
        return new FailureAnalysis(
                "A component requires a " + type.getName() + " bean, and none was made: the Locksmith starter"
                        + " (lock-spring-boot-starter) makes one only when the property locksmith.url is set, and it"
                        + " is not set.",
                "Set locksmith.url (or the environment variable LOCKSMITH_URL) to the lock store, for example"
                        + " redis://127.0.0.1:6379, zookeeper://127.0.0.1:2181, mysql://user@host:3306/db or"
                        + " postgresql://user@host:5432/db, with the backend module of its scheme (lock-redis,"
                        + " lock-zookeeper, lock-mysql, lock-postgres) on the class path. To build the client on the"
                        + " application's own DataSource, UnifiedJedis or CuratorFramework instead, set"
                        + " locksmith.use-application-connections=true with a locksmith.url naming only the scheme and"
                        + " the lock settings (for example mysql://?table=locks). Or define a LockClient bean of your"
                        + " own.",
                cause);
    }

    /** Before Spring Boot's analyzer of a missing bean, which would otherwise answer first. */
    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
