package org.locksmith.lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.spi.LockProvider;

/** ServiceLoader discovery, with the test provider registered under src/test/resources/META-INF/services. */
class LocksDiscoveryTest {

    @AfterEach
    void clearProperty() {
        System.clearProperty(Locks.URL_PROPERTY);
    }

    @Test
    void opensTheProviderWhoseSchemeMatches() {
        try (LockClient client = Locks.open("memory://somewhere?leaseMs=5000")) {
            assertThat(client.backend()).isEqualTo("memory");
            assertThat(MemoryLockProvider.lastUrl.parameter("leaseMs")).contains("5000");
        }
        assertThat(Locks.providers()).extracting(LockProvider::name).containsExactly("memory");
    }

    @Test
    void anUnknownSchemeListsWhatWasFound() {
        assertThatThrownBy(() -> Locks.open("etcd://h"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'etcd'")
                .hasMessageContaining("memory (memory://");
    }

    @Test
    void anUnknownParameterIsAnErrorListingTheKnownOnes() {
        assertThatThrownBy(() -> Locks.open("memory://h?leaseMS=5000"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("[leaseMS]")
                .hasMessageContaining("knows [leaseMs]");
    }

    @Test
    void openWithoutUrlUsesThePropertyElseTheOnlyProvider() {
        System.setProperty(Locks.URL_PROPERTY, "memory://from-property?leaseMs=7");
        try (LockClient client = Locks.open()) {
            assertThat(MemoryLockProvider.lastUrl.hosts().get(0).host()).isEqualTo("from-property");
        }
        System.clearProperty(Locks.URL_PROPERTY);
        if (System.getenv(Locks.URL_ENVIRONMENT_VARIABLE) == null) {
            try (LockClient client = Locks.open()) {
                assertThat(MemoryLockProvider.lastUrl.hosts().get(0).host()).isEqualTo("local");
            }
        }
    }

    @Test
    void noOrSeveralProvidersAndNoUrlIsExplained() {
        assertThatThrownBy(() -> Locks.onlyProvider(java.util.List.of()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("No lock provider")
                .hasMessageContaining(Locks.URL_PROPERTY)
                .hasMessageContaining(Locks.URL_ENVIRONMENT_VARIABLE);
        LockProvider memory = new MemoryLockProvider();
        assertThatThrownBy(() -> Locks.onlyProvider(java.util.List.of(memory, memory)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Several lock providers")
                .hasMessageContaining("memory (memory://")
                .hasMessageContaining(Locks.URL_PROPERTY);
        assertThat(Locks.onlyProvider(java.util.List.of(memory))).isSameAs(memory);
    }
}
