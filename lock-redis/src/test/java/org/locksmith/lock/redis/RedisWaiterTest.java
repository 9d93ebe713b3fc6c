package org.locksmith.lock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.testservers.PrivateRedis;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.RedisClient;

/**
 * Waiters and the connections they block: an application's pool shared with waiters is never drained by them, and
 * a waiter's {@code BLPOP} never outlives its deadline by more than the command timeout, even on a dead server.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisWaiterTest extends EnvironmentRedisTest {

    /** A waiting pool (maxWait 500 ms), so that a starved pool fails the renewal (and the test) instead of hanging. */
    private static RedisClient pooledClient(HostAndPort at, String name, int poolSize, int timeoutMillis) {
        return pooledClient(at, name, poolSize, timeoutMillis, Duration.ofMillis(500));
    }

    @Test
    void waitersNeverTakeTheConnectionsThatRenewalsAndReleasesNeed() throws Exception {
        String name = "starve-" + run;
        int poolSize = 4;
        int waiters = 10;
        try (RedisClient jedis = pooledClient(node, name, poolSize, 2_000);
                LockClient locks = RedisLocks.builder()
                        .restartHoldOff(Duration.ZERO)
                        .prefix(prefix)
                        .leaseTime(Duration.ofMillis(600))
                        .build(jedis)) {
            LockLease held = locks.lock("starve").acquire(Duration.ofSeconds(1));
            ExecutorService pool = Executors.newFixedThreadPool(waiters);
            List<Future<Long>> granted = new ArrayList<>();
            for (int i = 0; i < waiters; i++) {
                granted.add(pool.submit(() -> {
                    try (LockLease lease = locks.lock("starve").acquire(Duration.ofSeconds(30))) {
                        return lease.fencingToken();
                    }
                }));
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> blockedInBlpop(name) >= poolSize / 2);
            // Several leases long: the holder's lease only stays valid if renewals get a connection meanwhile.
            await().during(Duration.ofMillis(1_800))
                    .atMost(Duration.ofSeconds(3))
                    .until(() -> held.isValid() && blockedInBlpop(name) <= poolSize / 2);
            // A try on another key, from the same client, gets a connection too.
            try (LockLease other = locks.lock("starve-other").tryAcquire().orElseThrow()) {
                assertThat(other.isValid()).isTrue();
            }
            held.release();
            for (Future<Long> f : granted) {
                assertThat(f.get(20, TimeUnit.SECONDS)).isGreaterThan(held.fencingToken());
            }
            pool.shutdownNow();
        }
    }

    /**
     * Two lock clients built on one application client: the half-pool cap holds for the pool, not per lock client,
     * or their waiters together park every connection in BLPOP and the holder's renewals starve.
     */
    @Test
    void twoLockClientsOnOnePoolTogetherLeaveHalfOfItFree() throws Exception {
        String name = "shared-" + run;
        int poolSize = 4;
        int waitersEach = 6;
        try (RedisClient jedis = pooledClient(node, name, poolSize, 2_000);
                LockClient first = RedisLocks.builder()
                        .restartHoldOff(Duration.ZERO)
                        .prefix(prefix)
                        .leaseTime(Duration.ofMillis(600))
                        .build(jedis);
                LockClient second = RedisLocks.builder()
                        .restartHoldOff(Duration.ZERO)
                        .prefix(prefix)
                        .leaseTime(Duration.ofMillis(600))
                        .build(jedis)) {
            LockLease held = first.lock("shared").acquire(Duration.ofSeconds(1));
            ExecutorService pool = Executors.newFixedThreadPool(2 * waitersEach);
            List<Future<Long>> granted = new ArrayList<>();
            for (LockClient client : List.of(first, second)) {
                for (int i = 0; i < waitersEach; i++) {
                    granted.add(pool.submit(() -> {
                        try (LockLease lease = client.lock("shared").acquire(Duration.ofSeconds(30))) {
                            return lease.fencingToken();
                        }
                    }));
                }
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> blockedInBlpop(name) >= 1);
            await().during(Duration.ofMillis(1_800))
                    .atMost(Duration.ofSeconds(3))
                    .until(() -> held.isValid() && blockedInBlpop(name) <= poolSize / 2);
            held.release();
            for (Future<Long> f : granted) {
                assertThat(f.get(20, TimeUnit.SECONDS)).isGreaterThan(held.fencingToken());
            }
            pool.shutdownNow();
        }
    }

    @Test
    void aPoolTooSmallToShareWithWaitersIsRejected() {
        try (RedisClient jedis = pooledClient(node, "tiny-" + run, 1, 2_000)) {
            assertThatThrownBy(() -> RedisLocks.builder().prefix(prefix).build(jedis))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("waitClient");
        }
    }

    @Test
    void aWaiterOnADeadServerFailsByItsDeadlinePlusTheCommandTimeout() throws Exception {
        try (PrivateRedis server = PrivateRedis.start();
                RedisClient jedis = pooledClient(new HostAndPort("127.0.0.1", server.port()), "dead-" + run, 8, 300);
                LockClient holder = RedisLocks.builder()
                        .restartHoldOff(Duration.ZERO)
                        .prefix(prefix)
                        .build(jedis);
                LockClient waiter = RedisLocks.builder()
                        .restartHoldOff(Duration.ZERO)
                        .prefix(prefix)
                        .build(jedis)) {
            holder.lock("dead").acquire(Duration.ofSeconds(1));
            Future<Object> waiting = Executors.newSingleThreadExecutor(r -> {
                        Thread t = new Thread(r, "dead-server-waiter");
                        t.setDaemon(true);
                        return t;
                    })
                    .submit(() -> waiter.lock("dead").acquire(Duration.ofMillis(1_500)));
            await().atMost(Duration.ofSeconds(5)).until(() -> {
                try (Jedis admin = RedisTckSupport.admin(new HostAndPort("127.0.0.1", server.port()))) {
                    return RedisTckSupport.blockedClients(admin, null) > 0;
                }
            });
            long pausedAt = System.nanoTime();
            server.pause();
            try {
                assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS))
                        .hasCauseInstanceOf(LockBackendException.class);
                // Deadline 1.5 s, command timeout 0.3 s: the BLPOP's socket gives up by 1.8 s after it began.
                assertThat(Duration.ofNanos(System.nanoTime() - pausedAt)).isLessThan(Duration.ofMillis(2_300));
            } finally {
                server.resume();
            }
        }
    }
}
