package org.locksmith.lock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;

/**
 * {@code waitReplicas}: grants and renewals count only once that many replicas acknowledged them ({@code WAIT}), on
 * a master with one replica (the Sentinel pair, opened through the sentinel).
 */
@Timeout(60)
class RedisReplicaWaitTest {
    private static PrivateRedisSentinel servers;

    @BeforeAll
    static void start() {
        servers = PrivateRedisSentinel.start();
    }

    @AfterAll
    static void stop() {
        if (servers != null) {
            servers.close();
        }
    }

    @Test
    void aGrantOneReplicaAcknowledgedIsHeldAndRenewed() throws Exception {
        String key = "wait-one-" + System.nanoTime();
        try (LockClient client = Locks.open(servers.url("leaseMs=600&waitReplicas=1&waitReplicasTimeoutMs=150"))) {
            LockLease lease = client.lock(key).acquire(Duration.ofSeconds(5));
            Thread.sleep(1_500); // several renewals, each acknowledged by the replica
            assertThat(lease.isValid()).isTrue();
            lease.release();
        }
    }

    @Test
    void aGrantTooFewReplicasAcknowledgedIsReleasedAndTheAcquireFails() {
        String key = "wait-two-" + System.nanoTime();
        try (LockClient strict = Locks.open(servers.url("waitReplicas=2&waitReplicasTimeoutMs=100"));
                LockClient other = Locks.open(servers.url(""))) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> strict.lock(key).acquire(Duration.ofSeconds(5)))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("only 1 of 2 replicas acknowledged");
            assertThat(System.nanoTime() - start)
                    .isLessThan(Duration.ofSeconds(2).toNanos());
            Optional<LockLease> free = other.lock(key).tryAcquire();
            assertThat(free)
                    .as("the key after a grant too few replicas acknowledged")
                    .isPresent();
            free.get().release();
        }
    }

    @Test
    void aStoppedReplicaFailsGrantsAndLeavesTheKeyFree() throws Exception {
        String key = "wait-paused-" + System.nanoTime();
        try (LockClient strict = Locks.open(servers.url("waitReplicas=1&waitReplicasTimeoutMs=100"));
                LockClient other = Locks.open(servers.url(""))) {
            servers.replica().pause();
            try {
                assertThatThrownBy(() -> strict.lock(key).tryAcquire())
                        .isInstanceOf(LockBackendException.class)
                        .hasMessageContaining("only 0 of 1 replicas acknowledged");
                assertThat(other.lock(key).tryAcquire()).isPresent().get().satisfies(LockLease::release);
            } finally {
                servers.replica().resume();
            }
        }
    }

    /** What waiting for one replica costs an uncontended acquire + release here (one host, loopback). */
    @Test
    void costOfWaitingForOneReplica() throws Exception {
        acquireReleaseNanos(servers.url("")); // warm-up of both paths, then measure each again
        acquireReleaseNanos(servers.url("waitReplicas=1"));
        long[] none = acquireReleaseNanos(servers.url(""));
        long[] one = acquireReleaseNanos(servers.url("waitReplicas=1"));
        System.out.printf(
                java.util.Locale.ROOT,
                "[wait-replicas] acquire+release p50: waitReplicas=0 %.0f us, waitReplicas=1 %.0f us (200 each, after a warm-up of both)%n",
                none[none.length / 2] / 1e3,
                one[one.length / 2] / 1e3);
    }

    private static long[] acquireReleaseNanos(String url) throws Exception {
        long[] took = new long[200];
        try (LockClient client = Locks.open(url)) {
            for (int i = 0; i < 50; i++) {
                client.lock("warm-" + i).acquire(Duration.ofSeconds(1)).release();
            }
            for (int i = 0; i < took.length; i++) {
                long start = System.nanoTime();
                client.lock("cost-" + i).acquire(Duration.ofSeconds(1)).release();
                took[i] = System.nanoTime() - start;
            }
        }
        Arrays.sort(took);
        return took;
    }
}
