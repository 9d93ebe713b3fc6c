package org.locksmith.lock.springintegration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;

/**
 * What a Spring user relies on in a lock registry, run unchanged against Spring's {@code RedisLockRegistry}, Spring's
 * {@code JdbcLockRegistry} and {@link LocksmithLockRegistry}: two nodes (two registries on their own connections) and
 * the threads of one node exclude each other, the holder re-enters, a lock taken with a time to live and never
 * unlocked ends at the TTL, and {@code expireUnusedOlderThan} leaves held locks alone. Where the registries differ (the
 * exception a non-owner's {@code unlock()} throws, the exception the holder's {@code unlock()} throws once another node
 * took the lock after the TTL), each subclass states what its registry does, the contract checks exactly that, and the
 * module README lists it.
 */
abstract class LockRegistryContract {
    /** How long the registries of {@link #shortExpiryNodeA()} and {@link #shortExpiryNodeB()} hold a lock without TTL. */
    static final Duration SHORT_EXPIRY = Duration.ofSeconds(1);

    /** Node A's registry; the same one on every call of one test. */
    abstract ExpirableLockRegistry<? extends DistributedLock> nodeA();

    /** Node B's registry, on connections of its own, over the same store and key space as {@link #nodeA()}. */
    abstract ExpirableLockRegistry<? extends DistributedLock> nodeB();

    /** The exception this registry's {@code unlock()} throws in a thread that does not hold the lock. */
    abstract Class<? extends Throwable> nonOwnerUnlockException();

    /**
     * The exception this registry's last {@code unlock()} throws in the thread that took the lock, once the lock's time
     * ran out (its TTL, or the registry's expiry) and another node took and released it.
     */
    abstract Class<? extends Throwable> unlockAfterExpiryException();

    /**
     * Node A again, but a lock it takes without a TTL is held for {@link #SHORT_EXPIRY}: the expiry of Spring's
     * registries ({@code expireAfter}), the lease time of a Locksmith client ({@code leaseMs}).
     */
    abstract ExpirableLockRegistry<? extends DistributedLock> shortExpiryNodeA();

    /** Node B, set up as {@link #shortExpiryNodeA()}. */
    abstract ExpirableLockRegistry<? extends DistributedLock> shortExpiryNodeB();

    /**
     * Whether this registry keeps a lock taken without a TTL for as long as its holder holds it (Locksmith renews it),
     * rather than letting it end at the registry's expiry unless the application renews it (Spring's registries).
     */
    abstract boolean renewsALockTakenWithoutATtl();

    private final String key = "contract-" + UUID.randomUUID();

    private static <T> T onAnotherThread(Callable<T> task) throws Exception {
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            return thread.submit(task).get(10, TimeUnit.SECONDS);
        } finally {
            thread.shutdownNow();
        }
    }

    @Test
    void twoNodesExcludeEachOtherUntilTheHolderUnlocks() throws Exception {
        DistributedLock a = nodeA().obtain(key);
        assertThat(a.tryLock(1, TimeUnit.SECONDS)).isTrue();
        try {
            assertThat(nodeB().obtain(key).tryLock()).as("node B while A holds").isFalse();
            assertThat(onAnotherThread(() -> nodeA().obtain(key).tryLock()))
                    .as("another thread of node A")
                    .isFalse();
        } finally {
            a.unlock();
        }
        DistributedLock b = nodeB().obtain(key);
        assertThat(b.tryLock(1, TimeUnit.SECONDS)).as("node B after A unlocked").isTrue();
        b.unlock();
    }

    @Test
    void theHolderReenters() throws Exception {
        DistributedLock a = nodeA().obtain(key);
        a.lock();
        assertThat(a.tryLock()).isTrue();
        a.unlock();
        assertThat(nodeB().obtain(key).tryLock())
                .as("still held after one of two unlocks")
                .isFalse();
        a.unlock();
        DistributedLock b = nodeB().obtain(key);
        assertThat(b.tryLock(1, TimeUnit.SECONDS)).isTrue();
        b.unlock();
    }

    @Test
    void aLockTakenWithATtlAndNeverUnlockedEndsAtTheTtl() throws Exception {
        DistributedLock a = nodeA().obtain(key);
        a.lock(Duration.ofSeconds(1));
        long start = System.nanoTime();
        DistributedLock b = nodeB().obtain(key);
        assertThat(b.tryLock(Duration.ofMillis(2_500), Duration.ofSeconds(30)))
                .as("node B within 2.5 s of a 1 s TTL")
                .isTrue();
        long waitedMillis = (System.nanoTime() - start) / 1_000_000;
        b.unlock();
        assertThat(waitedMillis).as("but not at once").isGreaterThanOrEqualTo(500);
        assertThatThrownBy(a::unlock)
                .as("the holder's unlock after the TTL")
                .isInstanceOf(unlockAfterExpiryException());
        DistributedLock again = nodeA().obtain(key);
        assertThat(again.tryLock(1, TimeUnit.SECONDS))
                .as("node A locks the key again after that unlock")
                .isTrue();
        again.unlock();
    }

    @Test
    void aLockTakenWithoutATtlIsRenewedOrEndsAtTheRegistrysExpiry() throws Exception {
        DistributedLock a = shortExpiryNodeA().obtain(key);
        a.lock();
        long start = System.nanoTime();
        DistributedLock b = shortExpiryNodeB().obtain(key);
        boolean bGotIt = b.tryLock(SHORT_EXPIRY.multipliedBy(3), Duration.ofSeconds(30));
        long waitedMillis = (System.nanoTime() - start) / 1_000_000;
        if (renewsALockTakenWithoutATtl()) {
            assertThat(bGotIt)
                    .as("node B within three times the lease time of a lock node A holds")
                    .isFalse();
            a.unlock();
            assertThat(b.tryLock(1, TimeUnit.SECONDS))
                    .as("node B after A unlocked")
                    .isTrue();
            b.unlock();
        } else {
            assertThat(bGotIt)
                    .as("node B within three times the registry's expiry of a lock taken without a TTL")
                    .isTrue();
            b.unlock();
            assertThat(waitedMillis).as("but not at once").isGreaterThanOrEqualTo(SHORT_EXPIRY.toMillis() / 2);
            assertThatThrownBy(a::unlock)
                    .as("the holder's unlock after the expiry")
                    .isInstanceOf(unlockAfterExpiryException());
        }
    }

    @Test
    void aNonOwnersUnlockThrows() throws Exception {
        DistributedLock a = nodeA().obtain(key);
        a.lock();
        try {
            Throwable thrown = onAnotherThread(() -> {
                try {
                    nodeA().obtain(key).unlock();
                    return null;
                } catch (Throwable t) {
                    return t;
                }
            });
            assertThat(thrown).isInstanceOf(nonOwnerUnlockException());
            assertThat(nodeB().obtain(key).tryLock())
                    .as("still held by its owner")
                    .isFalse();
        } finally {
            a.unlock();
        }
    }

    @Test
    void expireUnusedOlderThanLeavesHeldLocksAlone() throws Exception {
        DistributedLock a = nodeA().obtain(key);
        a.lock();
        try {
            nodeA().expireUnusedOlderThan(0);
            assertThat(nodeB().obtain(key).tryLock()).isFalse();
        } finally {
            a.unlock();
        }
        nodeA().expireUnusedOlderThan(0);
        DistributedLock again = nodeA().obtain(key);
        assertThat(again.tryLock(1, TimeUnit.SECONDS))
                .as("a lock obtained after the expiry works")
                .isTrue();
        again.unlock();
    }
}
