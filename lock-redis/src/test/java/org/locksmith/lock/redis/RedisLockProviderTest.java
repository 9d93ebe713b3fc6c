package org.locksmith.lock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.spi.LockUrl;
import org.locksmith.lock.testservers.TestRedis;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.UnifiedJedis;

/** {@link RedisLockProvider} on an application's {@link UnifiedJedis}, against the test server. */
class RedisLockProviderTest {
    private static final String PREFIX = "provider-" + UUID.randomUUID() + ":";

    private static RedisClient applicationClient() {
        LockUrl redis = LockUrl.parse(TestRedis.sharedUrl());
        return RedisClient.builder()
                .hostAndPort(new HostAndPort(
                        redis.hosts().get(0).host(), redis.hosts().get(0).port(6379)))
                .build();
    }

    @Test
    void opensOnTheApplicationsUnifiedJedisWithTheUrlsLockSettings() throws Exception {
        assertThat(new RedisLockProvider().applicationConnectionType()).contains(UnifiedJedis.class);
        try (RedisClient jedis = applicationClient()) {
            // the shared server's lock URL: restartHoldOffMs=0 on a server these tests started, which is fresh
            // (its hosts are not used: the application's client decides where to connect)
            try (LockClient client = Locks.open(TestRedis.sharedLockUrl("prefix=" + PREFIX + "&leaseMs=4000"), jedis);
                    LockLease lease = client.lock("app").acquire(Duration.ofSeconds(5))) {
                assertThat(lease.isValid()).isTrue();
                assertThat(jedis.keys("*" + PREFIX + "*"))
                        .as("under the URL's prefix")
                        .isNotEmpty();
            }
            assertThat(jedis.ping())
                    .as("closing the lock client leaves the application's open")
                    .isEqualTo("PONG");
        }
    }

    @Test
    void aConnectionParameterIsRejectedBeforeAnyIo() {
        AtomicInteger asked = new AtomicInteger();
        assertThatThrownBy(() -> Locks.open(
                        new RedisLockProvider(), LockUrl.parse("redis://?timeoutMs=500&leaseMs=5000"), () -> {
                            asked.incrementAndGet();
                            return applicationClient();
                        }))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("timeoutMs does not apply on the application's UnifiedJedis")
                .hasMessageContaining("leaseMs, prefix, restartHoldOffMs");
        assertThat(asked).as("the connection is not even asked for").hasValue(0);
    }

    @Test
    void aBadValueIsRejectedBeforeAnyIo() throws Exception {
        int closedPort;
        try (var socket = new java.net.ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        try (RedisClient nowhere = RedisClient.builder()
                .hostAndPort(new HostAndPort("127.0.0.1", closedPort))
                .build()) {
            assertThatThrownBy(() -> Locks.open("redis://?leaseMs=5", nowhere))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("leaseMs");
            assertThatThrownBy(() -> Locks.open("redis://?evictionCheck=never", nowhere))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("must be warn, refuse or ignore");
            assertThatThrownBy(() ->
                            Locks.open("redis://?waitReplicas=1&waitReplicasTimeoutMs=3000&leaseMs=6000", nowhere))
                    .as("the settings record checks them together")
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("Lock URL")
                    .hasMessageContaining("a third of the lease");
        }
    }
}
