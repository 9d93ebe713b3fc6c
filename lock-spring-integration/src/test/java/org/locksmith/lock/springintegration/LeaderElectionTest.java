package org.locksmith.lock.springintegration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.testservers.TestRedis;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.integration.leader.AbstractCandidate;
import org.springframework.integration.leader.Context;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import redis.clients.jedis.Jedis;

/**
 * Spring Integration's own leader election ({@link LockRegistryLeaderInitiator}, unchanged) on this registry against
 * the real Redis: two candidates for one role, either as two initiators on one registry (one client, two threads) or
 * on two registries over two clients (two nodes). Exactly one leads and stays leader across heartbeats; leadership
 * moves when the leader yields and when it stops; every grant's fencing token is greater than the one before.
 */
class LeaderElectionTest {
    private static LockClient clientA;
    private static LockClient clientB;

    private final String role = "leader-" + UUID.randomUUID();
    private final List<Long> grantTokens = new CopyOnWriteArrayList<>();
    private final List<String> revocations = new CopyOnWriteArrayList<>();
    private final List<LockRegistryLeaderInitiator> started = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void openClients() {
        clientA = Locks.open(TestRedis.sharedLockUrl("leaseMs=2000&prefix=locksmith-si-test:"));
        clientB = Locks.open(TestRedis.sharedLockUrl("leaseMs=2000&prefix=locksmith-si-test:"));
    }

    @AfterEach
    void stopInitiators() {
        started.forEach(LockRegistryLeaderInitiator::destroy);
    }

    @AfterAll
    static void closeClients() {
        clientA.close();
        clientB.close();
    }

    /** Records the fencing token of each grant, read on the selector thread that holds the lock. */
    private final class RecordingCandidate extends AbstractCandidate {
        private final LocksmithLockRegistry registry;

        RecordingCandidate(String id, LocksmithLockRegistry registry) {
            super(id, role);
            this.registry = registry;
        }

        @Override
        public void onGranted(Context ctx) {
            Optional<LockLease> lease = registry.obtain(role).lease();
            grantTokens.add(lease.map(LockLease::fencingToken).orElse(-1L));
        }

        @Override
        public void onRevoked(Context ctx) {
            revocations.add(getId());
        }
    }

    private LockRegistryLeaderInitiator start(String id, LocksmithLockRegistry registry) {
        LockRegistryLeaderInitiator initiator =
                new LockRegistryLeaderInitiator(registry, new RecordingCandidate(id, registry));
        initiator.setHeartBeatMillis(100);
        initiator.setBusyWaitMillis(50);
        SimpleAsyncTaskExecutor executor = new SimpleAsyncTaskExecutor("leader-" + id + "-");
        executor.setDaemon(true);
        initiator.setTaskExecutor(executor);
        initiator.setApplicationEventPublisher(event -> {});
        started.add(initiator);
        initiator.start();
        return initiator;
    }

    private static long leaders(LockRegistryLeaderInitiator... initiators) {
        return java.util.Arrays.stream(initiators)
                .filter(i -> i.getContext().isLeader())
                .count();
    }

    /** Exactly one leader soon, and still exactly one (no flapping) across several heartbeats. */
    private static LockRegistryLeaderInitiator oneStableLeader(LockRegistryLeaderInitiator... initiators) {
        await().atMost(Duration.ofSeconds(5)).until(() -> leaders(initiators) == 1);
        await().during(Duration.ofMillis(400))
                .atMost(Duration.ofSeconds(2))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> leaders(initiators) == 1);
        return java.util.Arrays.stream(initiators)
                .filter(i -> i.getContext().isLeader())
                .findFirst()
                .orElseThrow();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"one registry, one client", "two registries, two clients"})
    void exactlyOneLeaderAndLeadershipMovesWhenTheLeaderYieldsAndWhenItStops(String topology) {
        LocksmithLockRegistry registryA = new LocksmithLockRegistry(clientA);
        LocksmithLockRegistry registryB = topology.startsWith("one") ? registryA : new LocksmithLockRegistry(clientB);
        LockRegistryLeaderInitiator a = start("a", registryA);
        LockRegistryLeaderInitiator b = start("b", registryB);

        LockRegistryLeaderInitiator first = oneStableLeader(a, b);
        LockRegistryLeaderInitiator second = first == a ? b : a;

        first.getContext().yield();
        await().atMost(Duration.ofSeconds(5)).until(() -> second.getContext().isLeader());
        assertThat(oneStableLeader(a, b))
                .as("%s: leader after the first one yielded", topology)
                .isSameAs(second);

        second.stop();
        await().atMost(Duration.ofSeconds(5)).until(() -> first.getContext().isLeader());
        assertThat(oneStableLeader(a, b))
                .as("%s: leader after the second one stopped", topology)
                .isSameAs(first);

        first.stop();
        await().atMost(Duration.ofSeconds(5)).until(() -> leaders(a, b) == 0);
        try (LockClient other = Locks.open(TestRedis.sharedLockUrl("prefix=locksmith-si-test:"))) {
            Optional<LockLease> free = new LocksmithLockRegistry(other)
                    .obtain(role)
                    .lease(); // not held by this thread: empty; now show the key itself is free
            assertThat(free).isEmpty();
            Optional<LockLease> lease =
                    other.lock(LocksmithLockRegistry.DEFAULT_KEY_PREFIX + role).tryAcquire();
            assertThat(lease)
                    .as("%s: the role's lock after both stopped", topology)
                    .isPresent();
            lease.get().release();
        }
        assertThat(grantTokens)
                .as("%s: fencing tokens of the three grants", topology)
                .hasSize(3)
                .doesNotContain(-1L)
                .isSorted()
                .doesNotHaveDuplicates();
    }

    /**
     * A leader whose lock is lost behind its back (here: its key deleted in Redis) is revoked at its next heartbeat
     * after the loss is detected, and one leader is elected again, with a greater fencing token.
     */
    @Test
    void aLeaderWhoseLockIsLostInTheStoreIsRevokedAndAnotherElected() {
        LockRegistryLeaderInitiator a = start("a", new LocksmithLockRegistry(clientA));
        LockRegistryLeaderInitiator b = start("b", new LocksmithLockRegistry(clientB));
        LockRegistryLeaderInitiator first = oneStableLeader(a, b);

        try (Jedis redis = new Jedis(URI.create(TestRedis.sharedUrl()))) {
            Set<String> keys =
                    redis.keys("locksmith-si-test:*:lock:" + LocksmithLockRegistry.DEFAULT_KEY_PREFIX + role);
            assertThat(keys).as("the role's lock in Redis").hasSize(1);
            redis.del(keys.iterator().next());
        }

        await().atMost(Duration.ofSeconds(5)).until(() -> revocations.contains(first == a ? "a" : "b"));
        oneStableLeader(a, b);
        assertThat(grantTokens)
                .as("fencing tokens of both grants")
                .hasSize(2)
                .isSorted()
                .doesNotHaveDuplicates();
    }
}
