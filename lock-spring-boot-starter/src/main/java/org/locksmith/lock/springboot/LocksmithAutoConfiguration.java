package org.locksmith.lock.springboot;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;
import org.locksmith.lock.spi.LockUrl;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of a {@link LockClient} bean from {@code locksmith.url} (see {@link LocksmithProperties}).
 *
 * <ul>
 *   <li>Active when {@code locksmith.url} is set (also as the environment variable {@code LOCKSMITH_URL}, by Spring's
 *       relaxed binding); backs off when the application defines a {@code LockClient} bean of its own.
 *   <li>By default the client opens its own connections from the URL, through {@link Locks#open(String)}: the backend
 *       module of the URL's scheme ({@code lock-redis}, {@code lock-zookeeper}, {@code lock-mysql}, {@code
 *       lock-postgres}) must be on the class path, and no other backend is loaded.
 *   <li>With {@code locksmith.use-application-connections=true}, it is built on the application's own bean instead,
 *       of the type the scheme's lock provider names ({@code LockProvider.applicationConnectionType()}): a {@code
 *       DataSource} for {@code mysql:} and {@code postgresql:}, a {@code UnifiedJedis} for {@code redis:} and {@code
 *       rediss:}, a {@code CuratorFramework} for {@code zookeeper:}. Which URL parameters apply then is listed in the
 *       module's README; the others are rejected.
 *   <li>The client is closed when the context closes, before the application bean it was built on.
 *   <li>Once open, one INFO line names the backend and the store's URL, its password replaced by {@code ****}.
 *   <li>Without {@code locksmith.url}, a start that fails for want of a {@code LockClient} bean says so and names the
 *       property and its alternatives (a Spring Boot failure analyzer).
 *   <li>A store that cannot be reached when the context starts fails the start with the backend's {@code
 *       LockBackendException}, as a data source would; a store lost later shows in the health indicator ({@link
 *       LocksmithHealthAutoConfiguration}) while the client keeps trying.
 * </ul>
 */
// After the data source's auto-configuration, so that the DataSource this client may be built on is defined.
@AutoConfiguration(afterName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
@ConditionalOnProperty(prefix = "locksmith", name = "url")
@EnableConfigurationProperties(LocksmithProperties.class)
public class LocksmithAutoConfiguration {

    private static final Log LOG = LogFactory.getLog(LocksmithAutoConfiguration.class);

    /** The bean name of the auto-configured client. */
    static final String LOCK_CLIENT_BEAN = "lockClient";

    /** Created by Spring. */
    public LocksmithAutoConfiguration() {}

    /**
     * The lock client of {@code locksmith.url}, on its own connections or on the application's (see the class
     * comment). Closed with the context.
     *
     * @param properties the {@code locksmith.*} settings
     * @param beanFactory where the application's connection bean is looked up
     * @return the client, open
     */
    @Bean(name = LOCK_CLIENT_BEAN, destroyMethod = "close")
    @ConditionalOnMissingBean(LockClient.class)
    public LockClient lockClient(LocksmithProperties properties, ConfigurableListableBeanFactory beanFactory) {
        String url = properties.getUrl().trim();
        LockClient client = properties.isUseApplicationConnections()
                ? ApplicationConnections.open(url, beanFactory, LOCK_CLIENT_BEAN)
                : Locks.open(url);
        LOG.info("Locksmith lock client open: backend " + client.backend() + ", store " + redacted(url)
                + (properties.isUseApplicationConnections() ? ", on the application's connections" : ""));
        return client;
    }

    /** The URL with its password replaced by {@code ****} (as {@link LockUrl#toString()} writes it). */
    static String redacted(String url) {
        try {
            return LockUrl.parse(url).toString();
        } catch (IllegalArgumentException e) {
            return "(unparsable URL)"; // not reached: the client was opened from it
        }
    }
}
