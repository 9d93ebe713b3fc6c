package org.locksmith.lock.springintegration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.Locks;
import org.locksmith.lock.testservers.TestRedis;
import org.springframework.integration.support.locks.ExpirableLockRegistry;

/**
 * Spring Integration 7's time to live on the real Redis: a lock taken with {@code lock(ttl)} and never unlocked ends
 * at the TTL, as with Spring's own registries, while Locksmith's background renewal keeps a lock without a TTL; {@code
 * renewLock(key, ttl)} moves the end; and {@code expireUnusedOlderThan} (ExpirableLockRegistry) leaves held locks
 * alone.
 */
class LocksmithRegistryTtlTest {
    private static LockClient nodeA;
    private static LockClient nodeB;

    private final String prefix = "si-ttl-" + UUID.randomUUID() + ":";
    private final LocksmithLockRegistry registryA = new LocksmithLockRegistry(nodeA, prefix);
    private final LocksmithLockRegistry registryB = new LocksmithLockRegistry(nodeB, prefix);

    @BeforeAll
    static void openNodes() {
        // a lease time of 5 s: without the TTL, the lock would stay held by renewal far beyond 1 s
        nodeA = Locks.open(TestRedis.sharedUrl() + "?leaseMs=5000&restartHoldOffMs=0");
        nodeB = Locks.open(TestRedis.sharedUrl() + "?leaseMs=5000&restartHoldOffMs=0");
    }

    @AfterAll
    static void closeNodes() {
        nodeA.close();
        nodeB.close();
    }

    @Test
    void aLockTakenWithATtlAndNeverUnlockedEndsAtTheTtl() throws Exception {
        LocksmithRegistryLock held = registryA.obtain("job");
        long start = System.nanoTime();
        held.lock(Duration.ofSeconds(1));
        assertThat(held.lease())
                .as("valid while the TTL runs")
                .hasValueSatisfying(l -> assertThat(l.isValid()).isTrue());
        assertThat(registryB.obtain("job").tryLock())
                .as("another node, before the TTL")
                .isFalse();

        LocksmithRegistryLock other = registryB.obtain("job");
        assertThat(other.tryLock(Duration.ofMillis(2_500), Duration.ofSeconds(30)))
                .as("another node gets the key within 2.5 s of a 1 s TTL")
                .isTrue();
        long waitedMillis = (System.nanoTime() - start) / 1_000_000;
        assertThat(waitedMillis).as("not before the TTL").isGreaterThanOrEqualTo(1_000);
        try {
            assertThat(held.lease()).as("the first holder's lease has ended").isEmpty();
            assertThatThrownBy(held::lock)
                    .as("a re-entry after the TTL is refused as after a loss")
                    .isInstanceOf(LockLostException.class);
            assertThatThrownBy(held::unlock)
                    .as("its unlock reports the end, as after a loss, and gives the hold back")
                    .isInstanceOf(LockLostException.class);
            assertThatThrownBy(held::unlock).isInstanceOf(IllegalMonitorStateException.class);
        } finally {
            other.unlock();
        }
    }

    @Test
    void renewLockWithATtlMovesTheEndAndUnlockBeforeTheEndReleases() throws Exception {
        LocksmithRegistryLock held = registryA.obtain("renewed");
        held.lock(Duration.ofSeconds(1));
        registryA.renewLock("renewed", Duration.ofSeconds(30));
        assertThat(registryB.obtain("renewed").tryLock(Duration.ofMillis(2_000), Duration.ofSeconds(30)))
                .as("still held after the first TTL, which renewLock replaced")
                .isFalse();
        assertThat(held.tryLock()).as("re-entry by the holder").isTrue();
        held.unlock();
        held.unlock();
        assertThat(registryB.obtain("renewed").tryLock())
                .as("free after the unlock")
                .isTrue();
        registryB.obtain("renewed").unlock();
    }

    @Test
    void expireUnusedOlderThanLeavesHeldLocksAlone() throws Exception {
        assertThat(registryA).isInstanceOf(ExpirableLockRegistry.class);
        LocksmithRegistryLock plain = registryA.obtain("plain");
        LocksmithRegistryLock withTtl = registryA.obtain("with-ttl");
        plain.lock();
        withTtl.lock(Duration.ofSeconds(30));
        try {
            registryA.expireUnusedOlderThan(0);
            assertThat(registryB.obtain("plain").tryLock()).isFalse();
            assertThat(registryB.obtain("with-ttl").tryLock()).isFalse();
            assertThat(plain.lease()).isPresent();
            assertThat(withTtl.lease()).isPresent();
        } finally {
            plain.unlock();
            withTtl.unlock();
        }
        // polled on this thread, which then holds what it took
        await().pollInSameThread()
                .atMost(Duration.ofSeconds(5))
                .until(() -> registryB.obtain("with-ttl").tryLock());
        registryB.obtain("with-ttl").unlock();
    }
}
