package org.locksmith.lock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;

/**
 * ShedLock's own expectations of a lock provider ({@code shedlock-test-support}'s {@link
 * AbstractExtensibleLockProviderIntegrationTest}: exclusion, lockAtMostFor, lockAtLeastFor, extension, a fuzz test
 * through its {@code DefaultLockingTaskExecutor}), run unchanged against real Redis and MySQL. Every test passes as
 * ShedLock wrote it; where Locksmith differs by design (a crashed node's lock frees after the client's lease time,
 * not after lockAtMostFor), ShedLock's tests do not look, and {@link LocksmithLockProviderTest} says so.
 *
 * <p>{@code assertLocked}/{@code assertUnlocked} ask the store through a second client (another node): the key is
 * locked if that node cannot take it. Each test uses lock names of its own (a key prefix per instance), so the tests
 * run concurrently (see {@code junit-platform.properties}).
 */
@ParameterizedClass
@EnumSource(TestStores.class)
@Execution(ExecutionMode.CONCURRENT) // ShedLock's tests wait with fixed sleeps (2 s each): overlap them
class ShedLockProviderContractTest extends AbstractExtensibleLockProviderIntegrationTest {
    private static final Map<TestStores, LockClient[]> CLIENTS = new EnumMap<>(TestStores.class);

    private final TestStores store;
    private final String prefix = TestStores.uniquePrefix();
    private LocksmithLockProvider provider;

    ShedLockProviderContractTest(TestStores store) {
        this.store = store;
    }

    private static synchronized LockClient[] clients(TestStores store) {
        return CLIENTS.computeIfAbsent(store, s -> new LockClient[] {s.open(), s.open()});
    }

    /**
     * Every store's server is started, and both its clients opened and used once, before the first test: ShedLock's
     * tests count lockAtMostFor (2 s) from a configuration made just before the lock call, so a test must not share
     * the machine with a server starting up (an embedded MariaDB takes seconds of both cores on a fresh machine).
     */
    @BeforeAll
    static void openEveryStoreFirst() {
        for (TestStores store : TestStores.values()) {
            for (LockClient client : clients(store)) {
                client.lock(TestStores.uniquePrefix() + "warm-up").tryAcquire().ifPresent(LockLease::release);
            }
        }
    }

    @BeforeEach
    void openProvider() {
        provider = new LocksmithLockProvider(clients(store)[0], prefix);
    }

    @AfterEach
    void closeProvider() {
        provider.close();
    }

    @AfterAll
    static synchronized void closeClients() {
        CLIENTS.values().forEach(pair -> {
            pair[0].close();
            pair[1].close();
        });
        CLIENTS.clear();
    }

    @Override
    protected ExtensibleLockProvider getLockProvider() {
        return provider;
    }

    @Override
    protected void assertUnlocked(String lockName) {
        Optional<LockLease> other = clients(store)[1].lock(prefix + lockName).tryAcquire();
        assertThat(other)
                .as("%s: ShedLock lock '%s' should be free, so another node can take it", store, lockName)
                .isPresent();
        other.get().release();
    }

    @Override
    protected void assertLocked(String lockName) {
        Optional<LockLease> other = clients(store)[1].lock(prefix + lockName).tryAcquire();
        other.ifPresent(LockLease::release);
        assertThat(other)
                .as("%s: ShedLock lock '%s' should be held, so another node cannot take it", store, lockName)
                .isEmpty();
    }
}
