package org.locksmith.lock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import redis.clients.jedis.Jedis;

/**
 * A cluster master replaced by its replica ({@code CLUSTER FAILOVER}) while a key in its slots is held and waited
 * for: the old master ends its blocked {@code BLPOP}s with {@code UNBLOCKED} and redirects commands to the new one.
 * The waiters follow the slot to the new master instead of failing, and the holder's renewals keep its lease.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisClusterFailoverTest {
    private static PrivateRedisCluster cluster;

    @BeforeAll
    static void startCluster() {
        cluster = PrivateRedisCluster.startWithReplicaOfFirst();
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void waitersAndHolderFollowAFailover() throws Exception {
        String prefix = "failover:";
        String url = cluster.url() + "&leaseMs=2000&timeoutMs=1000&prefix=" + prefix;
        String key = RedisClusterTest.keyOnNode(prefix, 0);
        ExecutorService threads = Executors.newCachedThreadPool();
        List<LockClient> clients = new ArrayList<>();
        try (LockClient holder = Locks.open(url)) {
            LockLease held = holder.lock(key).acquire(Duration.ofSeconds(5));
            List<Future<long[]>> waiters = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                LockClient c = Locks.open(url);
                clients.add(c);
                waiters.add(threads.submit(() -> {
                    LockLease l = c.lock(key).acquire(Duration.ofSeconds(30));
                    long grantedAt = System.nanoTime();
                    Thread.sleep(20);
                    long releasedAt = System.nanoTime();
                    l.release();
                    return new long[] {grantedAt, releasedAt, l.fencingToken()};
                }));
            }
            try (Jedis master = RedisTckSupport.admin(cluster.nodeList().get(0))) {
                await().atMost(Duration.ofSeconds(5)).until(() -> RedisTckSupport.blockedClients(master, null) == 2);
            }
            long failoverAt = System.nanoTime();
            cluster.failOverFirstMaster();
            long failedOverAt = System.nanoTime();
            Thread.sleep(2_500); // more than a lease: only renewals on the new master keep the holder's lease
            for (Future<long[]> w : waiters) {
                assertThat(w.isDone())
                        .as("a waiter returned (failed or was granted) while the key was held")
                        .isFalse();
            }
            assertThat(held.isValid())
                    .as("holder's lease a lease time after the failover")
                    .isTrue();
            long releasedAt = System.nanoTime();
            held.release();
            List<long[]> grants = new ArrayList<>();
            for (Future<long[]> w : waiters) {
                grants.add(w.get(20, TimeUnit.SECONDS));
            }
            grants.sort((a, b) -> Long.compare(a[0], b[0]));
            assertThat(grants.get(1)[0]).as("second grant after first release").isGreaterThan(grants.get(0)[1]);
            assertThat(grants.get(0)[2]).isGreaterThan(held.fencingToken());
            assertThat(grants.get(1)[2]).isGreaterThan(grants.get(0)[2]);
            System.out.printf(
                    java.util.Locale.ROOT,
                    "[cluster-failover] CLUSTER FAILOVER took %d ms; first waiter granted %.1f ms after the release%n",
                    TimeUnit.NANOSECONDS.toMillis(failedOverAt - failoverAt),
                    (grants.get(0)[0] - releasedAt) / 1e6);
        } finally {
            clients.forEach(LockClient::close);
            threads.shutdownNow();
        }
    }
}
