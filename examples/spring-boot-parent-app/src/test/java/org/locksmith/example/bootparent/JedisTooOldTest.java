package org.locksmith.example.bootparent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.lang.reflect.InvocationTargetException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.Locks;
import org.locksmith.lock.redis.RedisLockProvider;
import org.slf4j.Logger;

/**
 * What an application on Spring Boot's parent gets without {@code jedis.version=8.0.2}: lock-redis on the Jedis 7.0
 * that Spring Boot 4.0.7 manages. The client must fail at start with a message naming the property to set, not with a
 * {@code NoSuchMethodError} from inside the Redis backend. The Jedis 7.0 jar (copied by this module's pom) and
 * lock-redis, lock-api, commons-pool2 and SLF4J are loaded in a class loader of their own.
 */
class JedisTooOldTest {

    @Test
    void openingARedisClientOnJedis7NamesThePropertyToSet() throws Exception {
        Path jedis7 = Path.of(System.getProperty("bootManagedJedis", "target/boot-managed-jedis/jedis-7.0.0.jar"));
        assertThat(jedis7)
                .as("copied by maven-dependency-plugin in generate-test-resources")
                .exists();
        URL[] urls = {
            jedis7.toUri().toURL(),
            location(Locks.class),
            location(RedisLockProvider.class),
            location(GenericObjectPoolConfig.class),
            location(Logger.class)
        };
        Thread thread = Thread.currentThread();
        ClassLoader before = thread.getContextClassLoader();
        try (URLClassLoader isolated = new URLClassLoader("jedis-7", urls, ClassLoader.getPlatformClassLoader())) {
            thread.setContextClassLoader(isolated);
            Throwable thrown = catchThrowable(() -> isolated.loadClass(Locks.class.getName())
                    .getMethod("open", String.class)
                    .invoke(null, "redis://127.0.0.1:1?connectTimeoutMs=200"));
            assertThat(thrown).isInstanceOf(InvocationTargetException.class);
            Throwable cause = thrown.getCause();
            assertThat(cause)
                    .as("a clear exception before any I/O, not a NoSuchMethodError or NoClassDefFoundError")
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("Jedis 7.0.0")
                    .hasMessageContaining("jedis.version")
                    .hasMessageContaining("8.0.2");
        } finally {
            thread.setContextClassLoader(before);
        }
    }

    private static URL location(Class<?> type) throws Exception {
        Path path =
                Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
        assertThat(Files.exists(path)).as("class path entry of " + type).isTrue();
        return path.toUri().toURL();
    }
}
