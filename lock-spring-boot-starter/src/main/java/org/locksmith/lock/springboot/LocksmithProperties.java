package org.locksmith.lock.springboot;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code locksmith.*} settings of the Spring Boot starter. The backend's own settings are not properties of
 * their own: they are the lock URL's query parameters, exactly as {@code Locks.open(url)} takes them, so that one
 * URL means the same thing in a Spring application, in {@code LOCKSMITH_URL} and on the {@code locksmith} command line.
 *
 * <pre>
 * locksmith:
 *   url: redis://127.0.0.1:6379?leaseMs=30000&amp;prefix=orders:
 *   use-application-connections: false
 *   health:
 *     key: locksmith:health
 *     timeout: 2s
 *     lost-window: 15m
 *   metrics:
 *     enabled: true
 * </pre>
 */
@ConfigurationProperties(prefix = "locksmith")
public class LocksmithProperties {

    /**
     * The lock URL: scheme (redis, rediss, zookeeper, mysql, postgresql) and the backend's settings as query
     * parameters, e.g. redis://127.0.0.1:6379?leaseMs=30000. Without it the starter makes no LockClient. An unknown
     * parameter fails the application's start.
     */
    private String url;

    /**
     * Build the LockClient on the application's own DataSource (mysql, postgresql), UnifiedJedis (redis, rediss) or
     * CuratorFramework (zookeeper) bean instead of opening connections from the URL. The URL then chooses the backend
     * by its scheme and gives the lock settings; its host, user, password and connection parameters must be left
     * out (a connection parameter is an error, not silently ignored).
     */
    private boolean useApplicationConnections;

    /** The health indicator's settings. */
    private final Health health = new Health();

    /** The Micrometer binding's settings. */
    private final Metrics metrics = new Metrics();

    /** Creates the settings with their defaults. */
    public LocksmithProperties() {}

    /** {@return the lock URL, or null if none is set} */
    public String getUrl() {
        return url;
    }

    /**
     * Sets the lock URL.
     *
     * @param url the new value
     */
    public void setUrl(String url) {
        this.url = url;
    }

    /** {@return whether the client is built on the application's own connection bean} */
    public boolean isUseApplicationConnections() {
        return useApplicationConnections;
    }

    /**
     * Sets whether the client is built on the application's own connection bean.
     *
     * @param useApplicationConnections the new value
     */
    public void setUseApplicationConnections(boolean useApplicationConnections) {
        this.useApplicationConnections = useApplicationConnections;
    }

    /** {@return the health indicator's settings} */
    public Health getHealth() {
        return health;
    }

    /** {@return the Micrometer binding's settings} */
    public Metrics getMetrics() {
        return metrics;
    }

    /** {@code locksmith.health.*}: how the health indicator probes the store. */
    public static class Health {

        /**
         * The key the health check takes and releases at once to prove the store answers. Reserve it: no application
         * lock may use it.
         */
        private String key = "locksmith:health";

        /** How long the probe may take before the store is reported DOWN. */
        private Duration timeout = Duration.ofSeconds(2);

        /** How far back "leases lost recently" counts. */
        private Duration lostWindow = Duration.ofMinutes(15);

        /** Creates the settings with their defaults. */
        public Health() {}

        /** {@return the reserved key the probe takes} */
        public String getKey() {
            return key;
        }

        /**
         * Sets the reserved key the probe takes.
         *
         * @param key the new value
         */
        public void setKey(String key) {
            this.key = key;
        }

        /** {@return how long the probe may take} */
        public Duration getTimeout() {
            return timeout;
        }

        /**
         * Sets how long the probe may take.
         *
         * @param timeout the new value
         */
        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }

        /** {@return how far back lost leases are counted} */
        public Duration getLostWindow() {
            return lostWindow;
        }

        /**
         * Sets how far back lost leases are counted.
         *
         * @param lostWindow the new value
         */
        public void setLostWindow(Duration lostWindow) {
            this.lostWindow = lostWindow;
        }
    }

    /** {@code locksmith.metrics.*}: the Micrometer binding. */
    public static class Metrics {

        /** Bind the LockClient's lock metrics (lock-micrometer) to the application's MeterRegistry. */
        private boolean enabled = true;

        /** Creates the settings with their defaults. */
        public Metrics() {}

        /** {@return whether the lock metrics are bound} */
        public boolean isEnabled() {
            return enabled;
        }

        /**
         * Sets whether the lock metrics are bound.
         *
         * @param enabled the new value
         */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }
}
