package org.locksmith.lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.spi.LockBackend;
import org.locksmith.lock.spi.LockProvider;
import org.locksmith.lock.spi.LockUrl;

/** The SPI's application connections: the defaults, and the checks {@link Locks#open(LockProvider, LockUrl, java.util.function.Supplier)} makes. */
class ApplicationConnectionTest {

    /** A provider written before application connections: only the abstract methods. */
    private static final LockProvider URL_ONLY = new MemoryLockProvider();

    /** Opens memory clients on an application's {@link StringBuilder} (standing for a DataSource or a Jedis). */
    static final class ConnectionProvider implements LockProvider {
        Object lastConnection;

        @Override
        public String name() {
            return "conn";
        }

        @Override
        public Set<String> schemes() {
            return Set.of("conn");
        }

        @Override
        public String defaultUrl() {
            return "conn://local";
        }

        @Override
        public Set<String> parameters() {
            return Set.of("leaseMs", "timeoutMs");
        }

        @Override
        public LockBackend open(LockUrl url) {
            return new MemoryBackend();
        }

        @Override
        public Optional<Class<?>> applicationConnectionType() {
            return Optional.of(StringBuilder.class);
        }

        @Override
        public Set<String> applicationConnectionParameters() {
            return Set.of("leaseMs");
        }

        @Override
        public LockClient openClient(LockUrl url, Object connection) {
            url.longParameter("leaseMs", 30_000, 1, 86_400_000);
            lastConnection = connection;
            return Locks.client(new MemoryBackend());
        }
    }

    @Test
    void aProviderThatOverridesNothingSupportsNoApplicationConnection() {
        assertThat(URL_ONLY.applicationConnectionType()).isEmpty();
        assertThat(URL_ONLY.applicationConnectionParameters()).isEmpty();
        assertThatThrownBy(() -> URL_ONLY.openClient(LockUrl.parse("memory://h"), new Object()))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("'memory'")
                .hasMessageContaining(MemoryLockProvider.class.getName());
    }

    @Test
    void opensOnTheConnectionAfterTheChecks() {
        ConnectionProvider provider = new ConnectionProvider();
        StringBuilder connection = new StringBuilder();
        try (LockClient client = Locks.open(provider, LockUrl.parse("conn://?leaseMs=5000"), () -> connection)) {
            assertThat(client.backend()).isEqualTo("memory");
        }
        assertThat(provider.lastConnection).isSameAs(connection);
    }

    @Test
    void aConnectionOnlyParameterIsRejectedBeforeTheConnectionIsAskedFor() {
        AtomicInteger asked = new AtomicInteger();
        assertThatThrownBy(() -> Locks.open(
                        new ConnectionProvider(), LockUrl.parse("conn://?timeoutMs=500&leaseMs=5000"), () -> {
                            asked.incrementAndGet();
                            return new StringBuilder();
                        }))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("timeoutMs does not apply on the application's StringBuilder")
                .hasMessageContaining("Parameters that apply: leaseMs");
        assertThat(asked).hasValue(0);
    }

    @Test
    void anUnknownParameterAWrongSchemeOrAWrongTypeIsRejected() {
        ConnectionProvider provider = new ConnectionProvider();
        assertThatThrownBy(() -> Locks.open(provider, LockUrl.parse("conn://?leaseMS=5"), StringBuilder::new))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("[leaseMS]")
                .hasMessageContaining("knows [leaseMs, timeoutMs]");
        assertThatThrownBy(() -> Locks.open(provider, LockUrl.parse("memory://h"), StringBuilder::new))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'conn' opens conn URLs");
        assertThatThrownBy(() -> Locks.open(provider, LockUrl.parse("conn://"), () -> "a string"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("opens clients on a java.lang.StringBuilder, not on a java.lang.String");
        assertThatThrownBy(() -> Locks.open(provider, LockUrl.parse("conn://?leaseMs=0"), StringBuilder::new))
                .as("the provider checks the values")
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseMs");
    }

    @Test
    void aProviderWithoutApplicationConnectionsIsNamed() {
        assertThatThrownBy(() -> Locks.open("memory://h?leaseMs=5000", new Object()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'memory'")
                .hasMessageContaining("cannot open a client on an application's connection");
        assertThatThrownBy(() -> Locks.open("etcd://h", new Object()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("No lock provider for scheme 'etcd'");
    }

    @Test
    void providerLooksUpTheSchemeInTheLoadersProviders() {
        ClassLoader loader = getClass().getClassLoader();
        assertThat(Locks.provider("memory", loader)).get().isInstanceOf(MemoryLockProvider.class);
        assertThat(Locks.provider("etcd", loader)).isEmpty();
        ClassLoader hiding = new ClassLoader(loader) {
            @Override
            protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
                if (name.equals(MemoryLockProvider.class.getName())) {
                    throw new ClassNotFoundException(name);
                }
                return super.loadClass(name, resolve);
            }
        };
        assertThat(Locks.provider("memory", hiding))
                .as("a registered provider the loader cannot load is absent")
                .isEmpty();
    }
}
