package org.locksmith.lock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.redis.internal.LockKeys;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.RedisClient;

/**
 * Commands whose reply is lost on the way back (a {@link FaultProxy} between client and server): the command ran in
 * Redis, the client cannot know. Acquire, release and the wake-up hand-off must all come out right anyway.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisLostReplyTest extends EnvironmentRedisTest {
    private static final int TIMEOUT_MS = 300;
    private FaultProxy proxy;
    private ExecutorService threads;

    @BeforeEach
    void startProxy() throws Exception {
        proxy = new FaultProxy(node.getHost(), node.getPort());
        threads = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "lost-reply-test");
            t.setDaemon(true);
            return t;
        });
    }

    @AfterEach
    void stopProxy() {
        threads.shutdownNow();
        proxy.close();
    }

    private RedisClient client(HostAndPort at, String name) {
        return pooledClient(at, name, 8, TIMEOUT_MS, Duration.ofSeconds(2));
    }

    private RedisClient proxied(String name) {
        return client(new HostAndPort("127.0.0.1", proxy.port()), name);
    }

    private LockClient locks(RedisClient commands, RedisClient waits) {
        return RedisLocks.builder()
                .restartHoldOff(Duration.ZERO)
                .prefix(prefix)
                .leaseTime(Duration.ofSeconds(30))
                .waitClient(waits)
                .build(commands);
    }

    private static Jedis admin() {
        return RedisTckSupport.admin(node);
    }

    /**
     * A tryAcquire through the proxy, with {@code fault} striking its reply: it must fail within {@code failsWithin},
     * and the key must be free (no owner left by the attempt) within {@code freedWithin} after that, zero meaning
     * when the exception arrives.
     */
    private void ambiguousAcquireLeavesTheKeyFree(
            String key, Runnable fault, Duration failsWithin, Duration freedWithin) {
        try (RedisClient viaProxy = proxied(key + "-" + run);
                RedisClient direct = client(node, key + "-d-" + run);
                LockClient locks = locks(viaProxy, direct);
                LockClient other = locks(direct, direct)) {
            fault.run();
            long start = System.nanoTime();
            assertThatThrownBy(() -> locks.lock(key).tryAcquire()).isInstanceOf(LockBackendException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(failsWithin);
            Runnable noOwner = () -> {
                try (Jedis jedis = admin()) {
                    assertThat(jedis.hget(LockKeys.of(prefix, key).hash(), "o"))
                            .as("owner left in Redis by the acquire whose reply was lost")
                            .isNull();
                }
            };
            if (freedWithin.isZero()) {
                noOwner.run();
            } else {
                await().atMost(freedWithin).untilAsserted(noOwner::run);
            }
            assertThat(other.lock(key).tryAcquire())
                    .as("the key is free, not held until the lease ends")
                    .isPresent();
        }
    }

    @Test
    void anAcquireWhoseReplyTimesOutDoesNotLeaveTheKeyHeld() {
        // Fails within the command timeout; the clean-up release runs in the background, not waited for.
        ambiguousAcquireLeavesTheKeyFree(
                "timed-out-acquire",
                () -> proxy.arm(FaultProxy.Fault.SILENCE_REPLY),
                Duration.ofMillis(TIMEOUT_MS + 250),
                Duration.ofSeconds(3));
    }

    @Test
    void anAcquireWhoseConnectionBreaksTwiceIsReleasedBeforeTheFailureIsReported() {
        // The first attempt and its retry both run in Redis, and both lose their reply.
        ambiguousAcquireLeavesTheKeyFree(
                "broken-acquire",
                () -> proxy.armArrayReplies(FaultProxy.Fault.CLOSE_ON_REPLY, 2),
                Duration.ofSeconds(2),
                Duration.ZERO);
    }

    /**
     * A holder, then a waiter whose short commands go through the proxy (its BLPOPs do not), then a patient waiter,
     * blocked in that order: Redis serves the longest-blocked BLPOP first, so the release's wake-up goes to the
     * proxied waiter.
     */
    private final class HandOff implements AutoCloseable {
        private final Deque<AutoCloseable> resources = new ArrayDeque<>();
        final LockLease held;
        final AtomicReference<Thread> proxiedThread = new AtomicReference<>();
        final Future<LockLease> proxiedWaiter;
        final Future<Long> patientGrantedAt;

        HandOff(String key) throws Exception {
            String waitName = key + "-w-" + run;
            String patientName = key + "-p-" + run;
            RedisClient holderJedis = track(client(node, key + "-h-" + run));
            RedisClient viaProxy = track(proxied(key + "-" + run));
            RedisClient waitDirect = track(client(node, waitName));
            RedisClient patientJedis = track(client(node, patientName));
            LockClient holder = track(locks(holderJedis, holderJedis));
            LockClient proxiedClient = track(locks(viaProxy, waitDirect));
            LockClient patient = track(locks(patientJedis, patientJedis));
            held = holder.lock(key).acquire(Duration.ofSeconds(1));
            proxiedWaiter = threads.submit(() -> {
                proxiedThread.set(Thread.currentThread());
                return proxiedClient.lock(key).acquire(Duration.ofSeconds(30));
            });
            await().atMost(Duration.ofSeconds(5)).until(() -> blockedInBlpop(waitName) == 1);
            patientGrantedAt = threads.submit(() -> {
                try (LockLease lease = patient.lock(key).acquire(Duration.ofSeconds(30))) {
                    return System.nanoTime();
                }
            });
            await().atMost(Duration.ofSeconds(5)).until(() -> blockedInBlpop(patientName) == 1);
        }

        private <T extends AutoCloseable> T track(T resource) {
            resources.push(resource);
            return resource;
        }

        /** Releases the holder's lease and checks that the patient waiter gets the key soon after. */
        void releaseAndExpectThePatientWaiterGranted(Class<? extends Throwable> proxiedWaiterFails) throws Exception {
            long releasedAt = System.nanoTime();
            held.release();
            assertThatThrownBy(() -> proxiedWaiter.get(10, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(proxiedWaiterFails);
            // Without the hand-off the patient waiter would sleep until the holder's 30 s lease had ended.
            assertThat(Duration.ofNanos(patientGrantedAt.get(10, TimeUnit.SECONDS) - releasedAt))
                    .as("the patient waiter is granted soon after the release")
                    .isLessThan(Duration.ofSeconds(3));
        }

        @Override
        public void close() throws Exception {
            while (!resources.isEmpty()) {
                resources.pop().close();
            }
        }
    }

    @Test
    void aWaiterThatFailsAfterConsumingTheWakeUpPassesItOn() throws Exception {
        try (HandOff scene = new HandOff("fails-after-wake")) {
            // The woken waiter's next attempt never reaches Redis: it fails after consuming the wake-up.
            proxy.arm(FaultProxy.Fault.SILENCE_REQUEST);
            scene.releaseAndExpectThePatientWaiterGranted(LockBackendException.class);
        }
    }

    @Test
    void aReleaseWhoseReplyIsLostAndIsRetriedSucceeds() {
        try (RedisClient viaProxy = proxied("lost-release-" + run);
                RedisClient direct = client(node, "lost-release-o-" + run);
                LockClient locks = locks(viaProxy, viaProxy);
                LockClient other = locks(direct, direct)) {
            LockLease lease = locks.lock("twice").tryAcquire().orElseThrow();
            // The release runs in Redis, then the connection breaks before its reply: the client sends it again.
            proxy.arm(FaultProxy.Fault.CLOSE_ON_REPLY);
            lease.release();
            assertThat(lease.isValid()).isFalse();
            assertThat(other.lock("twice").tryAcquire()).as("released in Redis").isPresent();
        }
    }

    @Test
    void aRepeatedReleaseStillReportsALeaseThatExpiredAsLost() throws Exception {
        try (RedisClient jedis = client(node, "expired-" + run);
                LockClient locks = RedisLocks.builder()
                        .restartHoldOff(Duration.ZERO)
                        .prefix(prefix)
                        .leaseTime(Duration.ofMillis(300))
                        .build(jedis)) {
            LockLease lease = locks.lock("expired").tryAcquire().orElseThrow();
            try (Jedis admin = admin()) {
                // Stands for a lease that ran out behind the holder's back: the record of a release is not faked.
                admin.del(LockKeys.of(prefix, "expired").hash());
            }
            assertThatThrownBy(lease::release).isInstanceOf(org.locksmith.lock.LockLostException.class);
        }
    }

    @Test
    void aWaiterInterruptedAfterConsumingTheWakeUpPassesItOn() throws Exception {
        try (HandOff scene = new HandOff("interrupted")) {
            // The cancel signal that would unblock the interrupted waiter's BLPOP is held back, so the wake-up of
            // the release reaches it first: it consumes the wake-up after its interrupt.
            proxy.arm(FaultProxy.Fault.SILENCE_REQUEST);
            scene.proxiedThread.get().interrupt();
            proxy.awaitHit();
            scene.releaseAndExpectThePatientWaiterGranted(InterruptedException.class);
        }
    }
}
