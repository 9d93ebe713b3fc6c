package org.locksmith.lock.springboot;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import javax.sql.DataSource;
import org.apache.curator.framework.CuratorFramework;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.mysql.MySqlLocks;
import org.locksmith.lock.mysql.MySqlStrategy;
import org.locksmith.lock.postgres.PostgresLocks;
import org.locksmith.lock.redis.RedisLocks;
import org.locksmith.lock.spi.LockUrl;
import org.locksmith.lock.zookeeper.ZooKeeperLocks;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.util.ClassUtils;
import redis.clients.jedis.UnifiedJedis;

/**
 * Builds a lock client on the application's own connection bean ({@code locksmith.use-application-connections}).
 * The URL's scheme picks the backend and its query parameters give the lock settings; its address, user and password
 * are not used (the bean decides where to connect), and a parameter that only configures connections is rejected.
 *
 * <p>Each backend sits in a nested class that is loaded only when its scheme is asked for, so the backends the
 * application does not have on its class path are never touched.
 */
final class ApplicationConnections {

    private ApplicationConnections() {}

    static LockClient open(String url, ConfigurableListableBeanFactory beanFactory, String clientBeanName) {
        LockUrl lockUrl = LockUrl.parse(url);
        ClassLoader loader = beanFactory.getBeanClassLoader();
        switch (lockUrl.scheme()) {
            case "redis", "rediss" -> {
                requireClass("org.locksmith.lock.redis.RedisLocks", "lock-redis", lockUrl, loader);
                return Redis.open(lockUrl, beanFactory, clientBeanName);
            }
            case "zookeeper" -> {
                requireClass("org.locksmith.lock.zookeeper.ZooKeeperLocks", "lock-zookeeper", lockUrl, loader);
                return ZooKeeper.open(lockUrl, beanFactory, clientBeanName);
            }
            case "mysql" -> {
                requireClass("org.locksmith.lock.mysql.MySqlLocks", "lock-mysql", lockUrl, loader);
                return MySql.open(lockUrl, beanFactory, clientBeanName);
            }
            case "postgresql", "postgres" -> {
                requireClass("org.locksmith.lock.postgres.PostgresLocks", "lock-postgres", lockUrl, loader);
                return Postgres.open(lockUrl, beanFactory, clientBeanName);
            }
            default ->
                throw new IllegalArgumentException("locksmith.use-application-connections=true works with"
                        + " redis, rediss, zookeeper, mysql and postgresql URLs, not " + lockUrl.scheme() + ": ("
                        + lockUrl
                        + "); set it to false to open the client from the URL");
        }
    }

    private static void requireClass(String className, String module, LockUrl url, ClassLoader loader) {
        if (!ClassUtils.isPresent(className, loader)) {
            throw new IllegalStateException("locksmith.url " + url + " needs the Locksmith backend module "
                    + "org.locksmith:" + module + " on the class path: add it to the application's dependencies");
        }
    }

    /** Fails naming the parameters of {@code url} that are not among {@code applicable}. */
    private static void onlyParameters(LockUrl url, Class<?> beanType, String... applicable) {
        Set<String> wrong = new TreeSet<>(url.parameters().keySet());
        Arrays.asList(applicable).forEach(wrong::remove);
        if (!wrong.isEmpty()) {
            throw new IllegalArgumentException("locksmith.url " + url + ": " + String.join(", ", wrong)
                    + (wrong.size() == 1 ? " does" : " do") + " not apply with"
                    + " locksmith.use-application-connections=true, where the application's " + beanType.getSimpleName()
                    + " bean makes the connections; set it on that bean, or remove it. Parameters that apply: "
                    + String.join(", ", new TreeSet<>(Arrays.asList(applicable))));
        }
    }

    /**
     * The application's one bean of {@code type} (or its {@code @Primary} one), recorded as a dependency of the lock
     * client so that the context closes the client before it.
     */
    private static <T> T applicationBean(
            ConfigurableListableBeanFactory beanFactory, Class<T> type, String clientBeanName, LockUrl url) {
        T bean = beanFactory.getBeanProvider(type).getIfUnique();
        String[] names = beanFactory.getBeanNamesForType(type);
        if (bean == null) {
            throw new IllegalStateException("locksmith.use-application-connections=true with the " + url.scheme()
                    + " URL " + url + " needs one " + type.getName() + " bean, or one marked @Primary; the context has "
                    + (names.length == 0 ? "none" : String.join(", ", names))
                    + ". Define it, or set locksmith.use-application-connections=false to connect from the URL");
        }
        for (String name : names) {
            if (beanFactory.getBean(name) == bean) {
                beanFactory.registerDependentBean(name, clientBeanName);
            }
        }
        return bean;
    }

    private static Duration millis(LockUrl url, String name) {
        return Duration.ofMillis(url.longParameter(name, 0, 0, Long.MAX_VALUE));
    }

    /** {@code RedisLocks.builder()} on a {@code UnifiedJedis} bean. */
    private static final class Redis {
        static LockClient open(LockUrl url, ConfigurableListableBeanFactory beanFactory, String clientBeanName) {
            onlyParameters(
                    url,
                    UnifiedJedis.class,
                    "leaseMs",
                    "prefix",
                    "restartHoldOffMs",
                    "evictionCheck",
                    "waitPoolSize",
                    "waitReplicas",
                    "waitReplicasTimeoutMs");
            UnifiedJedis jedis = applicationBean(beanFactory, UnifiedJedis.class, clientBeanName, url);
            RedisLocks.Builder builder = RedisLocks.builder();
            url.parameter("leaseMs").ifPresent(v -> builder.leaseTime(millis(url, "leaseMs")));
            url.parameter("prefix").ifPresent(builder::prefix);
            url.parameter("restartHoldOffMs").ifPresent(v -> builder.restartHoldOff(millis(url, "restartHoldOffMs")));
            url.parameter("evictionCheck")
                    .ifPresent(
                            v -> builder.evictionCheck(RedisLocks.EvictionCheck.valueOf(v.toUpperCase(Locale.ROOT))));
            url.parameter("waitPoolSize")
                    .ifPresent(v -> builder.maxBlockingWaiters(url.intParameter("waitPoolSize", 0, 1, 10_000)));
            if (url.parameter("waitReplicas").isPresent()) {
                Duration timeout = url.parameter("waitReplicasTimeoutMs").isPresent()
                        ? millis(url, "waitReplicasTimeoutMs")
                        : Duration.ofMillis(200);
                builder.waitForReplicas(url.intParameter("waitReplicas", 0, 0, 100), timeout);
            }
            return builder.address("the application's UnifiedJedis bean").build(jedis);
        }
    }

    /** {@code ZooKeeperLocks.using(curator, root)} on a {@code CuratorFramework} bean; the URL's path is the root. */
    private static final class ZooKeeper {
        static LockClient open(LockUrl url, ConfigurableListableBeanFactory beanFactory, String clientBeanName) {
            onlyParameters(url, CuratorFramework.class);
            CuratorFramework curator = applicationBean(beanFactory, CuratorFramework.class, clientBeanName, url);
            return url.path().isEmpty()
                    ? ZooKeeperLocks.using(curator)
                    : ZooKeeperLocks.using(curator, url.path().startsWith("/") ? url.path() : "/" + url.path());
        }
    }

    /** {@code MySqlLocks.builder()} on a {@code DataSource} bean (one shard). */
    private static final class MySql {
        static LockClient open(LockUrl url, ConfigurableListableBeanFactory beanFactory, String clientBeanName) {
            onlyParameters(
                    url,
                    DataSource.class,
                    "strategy",
                    "table",
                    "createSchema",
                    "leaseMs",
                    "checkIntervalMs",
                    "sessionTimeoutMs",
                    "poolSize",
                    "timeoutMs",
                    "restartHoldOffMs",
                    "replaceShardMap");
            DataSource dataSource = applicationBean(beanFactory, DataSource.class, clientBeanName, url);
            MySqlLocks.Builder builder = MySqlLocks.builder().dataSource(dataSource);
            url.parameter("strategy").ifPresent(v -> builder.strategy(MySqlStrategy.parse(v)));
            url.parameter("table").ifPresent(builder::table);
            url.parameter("createSchema")
                    .ifPresent(v -> builder.createSchema(url.booleanParameter("createSchema", true)));
            url.parameter("leaseMs").ifPresent(v -> builder.leaseTime(millis(url, "leaseMs")));
            url.parameter("checkIntervalMs").ifPresent(v -> builder.checkInterval(millis(url, "checkIntervalMs")));
            url.parameter("sessionTimeoutMs").ifPresent(v -> builder.sessionTimeout(millis(url, "sessionTimeoutMs")));
            url.parameter("poolSize").ifPresent(v -> builder.poolSize(url.intParameter("poolSize", 1, 1, 10_000)));
            url.parameter("timeoutMs").ifPresent(v -> builder.timeout(millis(url, "timeoutMs")));
            url.parameter("restartHoldOffMs").ifPresent(v -> builder.restartHoldOff(millis(url, "restartHoldOffMs")));
            url.parameter("replaceShardMap")
                    .ifPresent(v -> builder.replaceShardMap(url.booleanParameter("replaceShardMap", false)));
            return builder.build();
        }
    }

    /** {@code PostgresLocks.builder()} on a {@code DataSource} bean. */
    private static final class Postgres {
        static LockClient open(LockUrl url, ConfigurableListableBeanFactory beanFactory, String clientBeanName) {
            onlyParameters(
                    url,
                    DataSource.class,
                    "table",
                    "createSchema",
                    "checkIntervalMs",
                    "sessionTimeoutMs",
                    "poolSize",
                    "timeoutMs",
                    "restartHoldOffMs");
            DataSource dataSource = applicationBean(beanFactory, DataSource.class, clientBeanName, url);
            PostgresLocks.Builder builder = PostgresLocks.builder().dataSource(dataSource);
            url.parameter("table").ifPresent(builder::table);
            url.parameter("createSchema")
                    .ifPresent(v -> builder.createSchema(url.booleanParameter("createSchema", true)));
            url.parameter("checkIntervalMs").ifPresent(v -> builder.checkInterval(millis(url, "checkIntervalMs")));
            url.parameter("sessionTimeoutMs").ifPresent(v -> builder.sessionTimeout(millis(url, "sessionTimeoutMs")));
            url.parameter("poolSize").ifPresent(v -> builder.poolSize(url.intParameter("poolSize", 1, 1, 10_000)));
            url.parameter("timeoutMs").ifPresent(v -> builder.timeout(millis(url, "timeoutMs")));
            url.parameter("restartHoldOffMs").ifPresent(v -> builder.restartHoldOff(millis(url, "restartHoldOffMs")));
            return builder.build();
        }
    }
}
