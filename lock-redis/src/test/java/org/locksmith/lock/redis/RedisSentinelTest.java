package org.locksmith.lock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import redis.clients.jedis.HostAndPort;

/**
 * Sentinel: a client opened with {@code sentinelMaster} finds the master through the sentinel, and its holders and
 * waiters follow a failover ({@code SENTINEL FAILOVER}: the replica promoted, the old master made a replica, its
 * blocked {@code BLPOP}s ended with {@code UNBLOCKED} and its writes refused with {@code READONLY}).
 */
@Timeout(120)
class RedisSentinelTest {
    private static PrivateRedisSentinel sentinel;

    @BeforeAll
    static void startSentinel() {
        sentinel = PrivateRedisSentinel.start();
    }

    @AfterAll
    static void stopSentinel() {
        if (sentinel != null) {
            sentinel.close();
        }
    }

    /** A failover just before may still be settling: the old master re-syncing as the new replica. */
    @BeforeEach
    void settled() {
        sentinel.awaitSettled();
    }

    /** What one waiter saw: when it was granted and released, and its token. */
    private record Grant(long grantedAt, long releasedAt, long token) {}

    /**
     * One failover, two keys. Key A: a holder and three waiters; the holder keeps its lease through the failover
     * (renewals reach the new master) and releases a lease time later; the waiters, ended with {@code UNBLOCKED} on
     * the old master, are granted one after another on the new one. Key B: released right after the failover; its
     * waiter is granted then.
     */
    @Test
    void holderAndWaitersFollowAFailover() throws Exception {
        String key = "failover-" + System.nanoTime();
        String other = key + "-b";
        String url = sentinel.url("leaseMs=2000&timeoutMs=1000");
        ExecutorService threads = Executors.newCachedThreadPool();
        List<LockClient> clients = new ArrayList<>();
        try (LockClient holder = Locks.open(url)) {
            LockLease held = holder.lock(key).acquire(Duration.ofSeconds(5));
            long heldToken = held.fencingToken();
            LockLease heldB = holder.lock(other).acquire(Duration.ofSeconds(5));
            LockClient waiterB = Locks.open(url);
            clients.add(waiterB);
            Future<Long> waitingB = threads.submit(() -> {
                LockLease l = waiterB.lock(other).acquire(Duration.ofSeconds(30));
                long at = System.nanoTime();
                l.release();
                return at;
            });
            List<Future<Grant>> waiters = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                LockClient c = Locks.open(url);
                clients.add(c);
                waiters.add(threads.submit(() -> {
                    LockLease l = c.lock(key).acquire(Duration.ofSeconds(30));
                    long grantedAt = System.nanoTime();
                    Thread.sleep(30);
                    boolean valid = l.isValid();
                    long releasedAt = System.nanoTime();
                    l.release();
                    assertThat(valid).as("waiter's lease valid while it held").isTrue();
                    return new Grant(grantedAt, releasedAt, l.fencingToken());
                }));
            }
            try (redis.clients.jedis.Jedis master = RedisTckSupport.admin(sentinel.master())) {
                // the three waiters of key A and the one of key B block in BLPOP on the master
                org.awaitility.Awaitility.await()
                        .atMost(Duration.ofSeconds(5))
                        .until(() -> RedisTckSupport.blockedClients(master, null) == 4);
            }
            HostAndPort before = sentinel.master();
            long failoverAt = System.nanoTime();
            HostAndPort after = sentinel.failover();
            long failedOverAt = System.nanoTime();
            assertThat(after).isNotEqualTo(before);
            heldB.release();
            long grantedB = waitingB.get(20, TimeUnit.SECONDS);
            for (Future<Grant> w : waiters) {
                assertThat(w.isDone())
                        .as("a waiter returned while the holder holds")
                        .isFalse();
            }
            // The holder's renewals reach the new master: its lease stays valid past a lease time.
            Thread.sleep(2_500);
            assertThat(held.isValid()).as("holder's lease after the failover").isTrue();
            long releasedAt = System.nanoTime();
            held.release();
            List<Grant> grants = new ArrayList<>();
            for (Future<Grant> w : waiters) {
                grants.add(w.get(20, TimeUnit.SECONDS));
            }
            grants.sort((a, b) -> Long.compare(a.grantedAt(), b.grantedAt()));
            for (int i = 1; i < grants.size(); i++) {
                assertThat(grants.get(i).grantedAt())
                        .as("waiter granted before the previous one released")
                        .isGreaterThan(grants.get(i - 1).releasedAt());
                assertThat(grants.get(i).token())
                        .isGreaterThan(grants.get(i - 1).token());
            }
            assertThat(grants.get(0).token()).isGreaterThan(heldToken);
            long handOff = grants.get(0).grantedAt() - releasedAt;
            System.out.printf(
                    java.util.Locale.ROOT,
                    "[sentinel] failover %s -> %s took %d ms; key B's waiter granted %d ms after SENTINEL FAILOVER"
                            + " was sent; key A's first waiter granted %.1f ms after its release%n",
                    before,
                    after,
                    TimeUnit.NANOSECONDS.toMillis(failedOverAt - failoverAt),
                    TimeUnit.NANOSECONDS.toMillis(grantedB - failoverAt),
                    handOff / 1e6);
            assertThat(handOff).as("hand-off after the failover").isLessThan(TimeUnit.SECONDS.toNanos(2));
        } finally {
            clients.forEach(LockClient::close);
            threads.shutdownNow();
        }
    }
}
