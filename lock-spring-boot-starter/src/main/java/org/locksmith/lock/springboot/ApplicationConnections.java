package org.locksmith.lock.springboot;

import java.util.Map;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;
import org.locksmith.lock.spi.LockProvider;
import org.locksmith.lock.spi.LockUrl;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;

/**
 * Builds a lock client on the application's own connection bean ({@code locksmith.use-application-connections}),
 * through the lock provider of the URL's scheme: the provider names the type of bean it opens clients on ({@link
 * LockProvider#applicationConnectionType()}), and {@link Locks#open(LockProvider, LockUrl, java.util.function.Supplier)}
 * checks the URL's parameters against those that apply on it before the bean is asked for. The URL's address, user
 * and password are not used (the bean decides where to connect).
 *
 * <p>No backend is known here: a backend the application does not have on its class path is never touched.
 */
final class ApplicationConnections {

    /** Locksmith's own backend module of each scheme, named when it is missing; other providers are named by scheme. */
    private static final Map<String, String> MODULES = Map.of(
            "redis", "lock-redis",
            "rediss", "lock-redis",
            "zookeeper", "lock-zookeeper",
            "mysql", "lock-mysql",
            "postgresql", "lock-postgres",
            "postgres", "lock-postgres");

    private ApplicationConnections() {}

    static LockClient open(String url, ConfigurableListableBeanFactory beanFactory, String clientBeanName) {
        LockUrl lockUrl = LockUrl.parse(url);
        ClassLoader loader = beanFactory.getBeanClassLoader();
        LockProvider provider = Locks.provider(
                        lockUrl.scheme(), loader != null ? loader : ApplicationConnections.class.getClassLoader())
                .orElseThrow(() -> new IllegalStateException("locksmith.url " + lockUrl + " needs "
                        + (MODULES.containsKey(lockUrl.scheme())
                                ? "the Locksmith backend module org.locksmith:" + MODULES.get(lockUrl.scheme())
                                : "a Locksmith lock provider for the scheme " + lockUrl.scheme())
                        + " on the class path: add it to the application's dependencies"));
        Class<?> type = provider.applicationConnectionType()
                .orElseThrow(() -> new IllegalArgumentException("locksmith.use-application-connections=true works"
                        + " with the URLs of lock providers that open clients on an application's connection, and"
                        + " the " + lockUrl.scheme() + " provider '" + provider.name() + "' does not: (" + lockUrl
                        + "); set it to false to open the client from the URL"));
        try {
            return Locks.open(provider, lockUrl, () -> applicationBean(beanFactory, type, clientBeanName, lockUrl));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "locksmith.url with locksmith.use-application-connections=true: " + e.getMessage(), e);
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
}
