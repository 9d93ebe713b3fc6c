package org.locksmith.lock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.redis.internal.LockKeys;
import org.locksmith.lock.spi.LockUrl;
import redis.clients.jedis.Connection;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.RedisClient;

/**
 * Commands whose reply is lost on the way back (a {@link FaultProxy} between client and server): the command ran in
 * Redis, the client cannot know. Acquire, release and the wake-up hand-off must all come out right anyway.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisLostReplyTest {
    private static final int TIMEOUT_MS = 300;
    private static TestRedis redis;
    private static HostAndPort node;
    private final String run = Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);
    private final String prefix = "locksmith-test:" + run + ":";
    private FaultProxy proxy;
    private ExecutorService threads;

    @BeforeAll
    static void startRedis() {
        redis = TestRedis.discover();
        LockUrl.HostAndPort h = LockUrl.parse(redis.url()).hosts().get(0);
        node = new HostAndPort(h.host(), h.port(6379));
    }

    @AfterAll
    static void stopRedis() {
        if (redis != null) {
            redis.close();
        }
    }

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
        GenericObjectPoolConfig<Connection> pool = new GenericObjectPoolConfig<>();
        pool.setMaxTotal(8);
        pool.setMaxWait(Duration.ofSeconds(2));
        return RedisClient.builder()
                .hostAndPort(at)
                .clientConfig(DefaultJedisClientConfig.builder()
                        .clientName(name)
                        .timeoutMillis(TIMEOUT_MS)
                        .build())
                .poolConfig(pool)
                .build();
    }

    private RedisClient proxied(String name) {
        return client(new HostAndPort("127.0.0.1", proxy.port()), name);
    }

    private LockClient locks(RedisClient commands, RedisClient waits) {
        return RedisLocks.builder()
                .prefix(prefix)
                .leaseTime(Duration.ofSeconds(30))
                .waitClient(waits)
                .build(commands);
    }

    private static Jedis admin() {
        return RedisTckSupport.admin(node);
    }

    private int blockedInBlpop(String clientName) {
        try (Jedis jedis = admin()) {
            return RedisTckSupport.blockedClients(jedis, clientName);
        }
    }

    @Test
    void anAcquireWhoseReplyTimesOutDoesNotLeaveTheKeyHeld() {
        try (RedisClient viaProxy = proxied("lost-acquire-" + run);
                RedisClient direct = client(node, "lost-acquire-w-" + run);
                LockClient locks = locks(viaProxy, direct);
                LockClient other = locks(direct, direct)) {
            proxy.arm(FaultProxy.Fault.SILENCE_REPLY);
            long start = System.nanoTime();
            assertThatThrownBy(() -> locks.lock("ambiguous").tryAcquire()).isInstanceOf(LockBackendException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .as("failure within the command timeout, the clean-up not waited for")
                    .isLessThan(Duration.ofMillis(TIMEOUT_MS + 250));
            // Freed by the clean-up release in the background, not after the 30 s lease.
            await().atMost(Duration.ofSeconds(3)).untilAsserted(() -> {
                try (Jedis jedis = admin()) {
                    assertThat(jedis.hget(LockKeys.of(prefix, "ambiguous").hash(), "o"))
                            .as("owner left in Redis by the acquire whose reply was lost")
                            .isNull();
                }
            });
            assertThat(other.lock("ambiguous").tryAcquire()).isPresent();
        }
    }

    @Test
    void anAcquireWhoseConnectionBreaksTwiceIsReleasedBeforeTheFailureIsReported() {
        try (RedisClient viaProxy = proxied("broken-acquire-" + run);
                RedisClient direct = client(node, "broken-acquire-w-" + run);
                LockClient locks = locks(viaProxy, direct);
                LockClient other = locks(direct, direct)) {
            // The first attempt and its retry both run in Redis, and both lose their reply.
            proxy.armArrayReplies(FaultProxy.Fault.CLOSE_ON_REPLY, 2);
            assertThatThrownBy(() -> locks.lock("broken").tryAcquire()).isInstanceOf(LockBackendException.class);
            try (Jedis jedis = admin()) {
                assertThat(jedis.hget(LockKeys.of(prefix, "broken").hash(), "o"))
                        .as("owner left in Redis by the acquire whose reply was lost")
                        .isNull();
            }
            assertThat(other.lock("broken").tryAcquire())
                    .as("the key is free at once, not after the lease")
                    .isPresent();
        }
    }

    @Test
    void aWaiterThatFailsAfterConsumingTheWakeUpPassesItOn() throws Exception {
        String waitName = "fails-after-wake-w-" + run;
        String patientName = "patient-" + run;
        try (RedisClient holderJedis = client(node, "holder-" + run);
                RedisClient viaProxy = proxied("fails-after-wake-" + run);
                RedisClient waitDirect = client(node, waitName);
                RedisClient patientJedis = client(node, patientName);
                LockClient holder = locks(holderJedis, holderJedis);
                LockClient failing = locks(viaProxy, waitDirect);
                LockClient patient = locks(patientJedis, patientJedis)) {
            LockLease held = holder.lock("handoff").acquire(Duration.ofSeconds(1));
            Future<LockLease> failed =
                    threads.submit(() -> failing.lock("handoff").acquire(Duration.ofSeconds(30)));
            // Redis serves the longest-blocked BLPOP first: the failing waiter must block before the patient one.
            await().atMost(Duration.ofSeconds(5)).until(() -> blockedInBlpop(waitName) == 1);
            Future<Long> granted = threads.submit(() -> {
                try (LockLease lease = patient.lock("handoff").acquire(Duration.ofSeconds(30))) {
                    return System.nanoTime();
                }
            });
            await().atMost(Duration.ofSeconds(5)).until(() -> blockedInBlpop(patientName) == 1);
            // The woken waiter's next attempt never reaches Redis: it fails after consuming the wake-up.
            proxy.arm(FaultProxy.Fault.SILENCE_REQUEST);
            long releasedAt = System.nanoTime();
            held.release();
            assertThatThrownBy(() -> failed.get(10, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(LockBackendException.class);
            // Without the hand-off the patient waiter would sleep until the holder's 30 s lease had ended.
            assertThat(Duration.ofNanos(granted.get(10, TimeUnit.SECONDS) - releasedAt))
                    .isLessThan(Duration.ofSeconds(3));
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
        String waitName = "interrupted-w-" + run;
        String patientName = "patient-i-" + run;
        try (RedisClient holderJedis = client(node, "holder-i-" + run);
                RedisClient viaProxy = proxied("interrupted-" + run);
                RedisClient waitDirect = client(node, waitName);
                RedisClient patientJedis = client(node, patientName);
                LockClient holder = locks(holderJedis, holderJedis);
                LockClient interrupted = locks(viaProxy, waitDirect);
                LockClient patient = locks(patientJedis, patientJedis)) {
            LockLease held = holder.lock("interrupted").acquire(Duration.ofSeconds(1));
            java.util.concurrent.atomic.AtomicReference<Thread> waiterThread =
                    new java.util.concurrent.atomic.AtomicReference<>();
            Future<LockLease> gaveUp = threads.submit(() -> {
                waiterThread.set(Thread.currentThread());
                return interrupted.lock("interrupted").acquire(Duration.ofSeconds(30));
            });
            await().atMost(Duration.ofSeconds(5)).until(() -> blockedInBlpop(waitName) == 1);
            Future<Long> granted = threads.submit(() -> {
                try (LockLease lease = patient.lock("interrupted").acquire(Duration.ofSeconds(30))) {
                    return System.nanoTime();
                }
            });
            await().atMost(Duration.ofSeconds(5)).until(() -> blockedInBlpop(patientName) == 1);
            // The cancel signal that would unblock the interrupted waiter's BLPOP is held back, so the wake-up of
            // the release below reaches it first: it consumes the wake-up after its interrupt.
            proxy.arm(FaultProxy.Fault.SILENCE_REQUEST);
            waiterThread.get().interrupt();
            proxy.awaitHit();
            long releasedAt = System.nanoTime();
            held.release();
            assertThatThrownBy(() -> gaveUp.get(10, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(InterruptedException.class);
            assertThat(Duration.ofNanos(granted.get(10, TimeUnit.SECONDS) - releasedAt))
                    .as("the patient waiter is granted after the release, not after the holder's 30 s lease")
                    .isLessThan(Duration.ofSeconds(3));
        }
    }
}
