package org.locksmith.lock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.redis.internal.LockKeys;
import redis.clients.jedis.Jedis;

/**
 * Redis-specific behaviour beyond the TCK, on the environment's Redis: the wake-up path, the lease bound on a
 * waiter's sleep, cancellation leaving nothing behind, the wait pool's overflow, and hostile keys.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisLockTest extends EnvironmentRedisTest {

    private LockClient open(String extra) {
        String lease = extra.contains("leaseMs=") ? "" : "leaseMs=2000&";
        return Locks.open(url(lease + "prefix=" + URLEncoder.encode(prefix, StandardCharsets.UTF_8) + extra));
    }

    private int keysOfRun() {
        try (Jedis jedis = RedisTckSupport.admin(node)) {
            return jedis.keys(prefix.replace("*", "\\*") + "*").size();
        }
    }

    @Test
    void declaresExactlyWhatItProves() {
        try (LockClient locks = open("")) {
            assertThat(locks.features())
                    .containsExactlyInAnyOrder(
                            LockFeature.REENTRANT,
                            LockFeature.FENCING,
                            LockFeature.DURABLE_FENCING,
                            LockFeature.LEASE_EXPIRY,
                            LockFeature.AUTO_RENEWAL,
                            LockFeature.BLOCKING_WAKEUP,
                            LockFeature.LOSS_DETECTION);
            assertThat(locks.backend()).isEqualTo("redis");
        }
    }

    @Test
    void releaseWakesOneWaiterWithoutPolling() throws Exception {
        try (LockClient a = open("&clientName=a");
                LockClient b = open("&clientName=b")) {
            LockLease held = a.lock("handoff").acquire(Duration.ofSeconds(1));
            AtomicReference<Long> grantedAt = new AtomicReference<>();
            CountDownLatch waiting = new CountDownLatch(1);
            Thread waiter = new Thread(
                    () -> {
                        try {
                            waiting.countDown();
                            try (LockLease lease = b.lock("handoff").acquire(Duration.ofSeconds(10))) {
                                grantedAt.set(System.nanoTime());
                                assertThat(lease.fencingToken()).isGreaterThan(held.fencingToken());
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    },
                    "test-waiter");
            waiter.setDaemon(true);
            waiter.start();
            waiting.await();
            // Let the waiter fail its attempt and block in BLPOP; the lease (2 s) is far from over.
            await().pollDelay(Duration.ofMillis(300)).until(() -> true);
            long releasedAt = System.nanoTime();
            held.release();
            waiter.join(5_000);
            assertThat(grantedAt.get()).as("waiter granted").isNotNull();
            assertThat(Duration.ofNanos(grantedAt.get() - releasedAt)).isLessThan(Duration.ofMillis(250));
        }
    }

    @Test
    void aWaiterNeverSleepsPastTheHoldersLease() throws Exception {
        // A holder that crashed: a hash with a foreign owner and 600 ms left, and nobody to release it.
        LockKeys keys = LockKeys.of(prefix, "crashed");
        try (Jedis jedis = RedisTckSupport.admin(node)) {
            jedis.hset(keys.hash(), java.util.Map.of("o", "ghost", "f", "1"));
            jedis.pexpire(keys.hash(), 600);
        }
        try (LockClient locks = open("")) {
            long start = System.nanoTime();
            try (LockLease lease = locks.lock("crashed").acquire(Duration.ofSeconds(20))) {
                Duration waited = Duration.ofNanos(System.nanoTime() - start);
                assertThat(waited).isBetween(Duration.ofMillis(400), Duration.ofMillis(2_000));
                assertThat(lease.fencingToken()).isGreaterThan(1);
            }
        }
    }

    @Test
    void anInterruptedWaiterLeavesNothingInRedis() throws Exception {
        try (LockClient a = open("");
                LockClient b = open("")) {
            LockLease held = a.lock("interrupt").acquire(Duration.ofSeconds(1));
            AtomicReference<Throwable> outcome = new AtomicReference<>();
            Thread waiter = new Thread(
                    () -> {
                        try {
                            b.lock("interrupt").acquire(Duration.ofSeconds(30));
                        } catch (Throwable t) {
                            outcome.set(t);
                        }
                    },
                    "test-interrupted-waiter");
            waiter.setDaemon(true);
            waiter.start();
            await().pollDelay(Duration.ofMillis(300)).until(() -> true);
            long interruptedAt = System.nanoTime();
            waiter.interrupt();
            waiter.join(5_000);
            assertThat(Duration.ofNanos(System.nanoTime() - interruptedAt)).isLessThan(Duration.ofMillis(500));
            assertThat(outcome.get()).isInstanceOf(InterruptedException.class);
            // Only the holder's hash: no cancel signal, no wake-up list.
            await().atMost(Duration.ofSeconds(2)).until(() -> keysOfRun() == 1);
            held.release();
            // The waiter marked the grant contended, so the release pushed a wake-up that nobody takes: bounded,
            // one element, gone after its TTL (the lease here, 2 s), like the hash's record of the release.
            assertThat(keysOfRun()).isLessThanOrEqualTo(2);
            await().atMost(Duration.ofSeconds(4)).until(() -> keysOfRun() == 0);
        }
    }

    @Test
    void waitersThatGiveUpAroundAReleasePassTheWakeUpOn() throws Exception {
        // A long lease: without the wake-up being passed on, the patient waiters would sleep until the lease ends.
        String longLease = "&leaseMs=10000";
        for (int round = 0; round < 3; round++) {
            String key = "give-up-" + round;
            try (LockClient holder = open(longLease);
                    LockClient others = open(longLease)) {
                LockLease held = holder.lock(key).acquire(Duration.ofSeconds(1));
                ExecutorService pool = Executors.newFixedThreadPool(6);
                List<Future<?>> impatient = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    // Deadlines spread around the release, so some give up just as the wake-up arrives.
                    long timeoutMs = 380 + 10L * i;
                    impatient.add(pool.submit(() -> {
                        // One that wins the race releases at once, like a patient one.
                        others.lock(key)
                                .tryAcquire(Duration.ofMillis(timeoutMs))
                                .ifPresent(LockLease::release);
                        return null;
                    }));
                }
                List<Future<Long>> patient = new ArrayList<>();
                for (int i = 0; i < 2; i++) {
                    patient.add(pool.submit(() -> {
                        try (LockLease lease = others.lock(key).acquire(Duration.ofSeconds(30))) {
                            return System.nanoTime();
                        }
                    }));
                }
                await().pollDelay(Duration.ofMillis(400)).until(() -> true);
                long releasedAt = System.nanoTime();
                held.release();
                for (Future<?> f : impatient) {
                    f.get(10, TimeUnit.SECONDS);
                }
                for (Future<Long> f : patient) {
                    assertThat(Duration.ofNanos(f.get(20, TimeUnit.SECONDS) - releasedAt))
                            .as("round %d: a patient waiter is granted soon after the release", round)
                            .isLessThan(Duration.ofSeconds(3));
                }
                pool.shutdownNow();
                try (Jedis jedis = RedisTckSupport.admin(node)) {
                    assertThat(jedis.keys(prefix + "*cancel:*"))
                            .as("cancel signals left")
                            .isEmpty();
                }
            }
        }
    }

    @Test
    void moreWaitersThanBlockingConnectionsAllGetTheLock() throws Exception {
        try (LockClient locks = open("&waitPoolSize=1&poolSize=2")) {
            LockLease held = locks.lock("overflow").acquire(Duration.ofSeconds(1));
            ExecutorService pool = Executors.newFixedThreadPool(4);
            AtomicInteger inside = new AtomicInteger();
            AtomicInteger maxInside = new AtomicInteger();
            List<Future<Long>> results = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                results.add(pool.submit(() -> {
                    try (LockLease lease = locks.lock("overflow").acquire(Duration.ofSeconds(20))) {
                        maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                        inside.decrementAndGet();
                        return lease.fencingToken();
                    }
                }));
            }
            await().pollDelay(Duration.ofMillis(200)).until(() -> true);
            held.release();
            for (Future<Long> f : results) {
                assertThat(f.get(20, TimeUnit.SECONDS)).isGreaterThan(held.fencingToken());
            }
            assertThat(maxInside.get()).isEqualTo(1);
            pool.shutdownNow();
        }
    }

    @Test
    void hostileKeysWorkAndNeverCollide() throws Exception {
        List<String> keys = List.of(
                "{braces}",
                "a{b}c",
                "a{c}b",
                "}{",
                "{",
                "}",
                "quote\"'`",
                "new\nline\r\t",
                "unicode-\u00e9\u4e2d\uD83D\uDD12",
                "lua ]] -- end",
                "%s %d *?[a-z]",
                "x".repeat(1024),
                "y".repeat(1023) + "{");
        try (LockClient a = open("");
                LockClient b = open("")) {
            List<LockLease> leases = new ArrayList<>();
            for (String key : keys) {
                Optional<LockLease> lease = a.lock(key).tryAcquire();
                assertThat(lease).as("first grant of %s", key).isPresent();
                leases.add(lease.get());
            }
            for (String key : keys) {
                assertThat(b.lock(key).tryAcquire()).as("%s is held", key).isEmpty();
            }
            for (LockLease lease : leases) {
                lease.release();
            }
            for (String key : keys) {
                try (LockLease lease = b.lock(key).tryAcquire().orElseThrow()) {
                    assertThat(lease.isValid()).isTrue();
                }
            }
        }
        // A key's braces never choose its slot: {x} and {x}-suffixed keys land where their digests say.
        assertThat(LockKeys.of(prefix, "{same}a").slot())
                .isNotEqualTo(LockKeys.of(prefix, "{same}b").slot());
        assertThat(LockKeys.of(prefix, "{same}a").hash())
                .isNotEqualTo(LockKeys.of(prefix, "{same}b").hash());
        // Each released hash stays as a record of its release for the wake-up TTL (the lease here, 2 s).
        await().atMost(Duration.ofSeconds(4)).until(() -> keysOfRun() == 0);
    }

    @Test
    void badSettingsFailBeforeAnyIo() {
        assertThatThrownBy(() -> Locks.open("redis://127.0.0.1:1?bogus=1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bogus")
                .hasMessageContaining("leaseMs");
        assertThatThrownBy(() -> Locks.open("redis://127.0.0.1:1?prefix=a%7Bb%7D"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must not contain");
        assertThatThrownBy(() -> Locks.open("redis://127.0.0.1:1?leaseMs=5"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseMs");
        assertThatThrownBy(() -> Locks.open("redis://127.0.0.1:1/abc"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("database");
        assertThatThrownBy(() -> Locks.open("redis://a:1,b:2?cluster=false"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cluster");
    }
}
