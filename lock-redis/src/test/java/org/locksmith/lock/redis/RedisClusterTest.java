package org.locksmith.lock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.redis.internal.LockKeys;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;

/**
 * Redis Cluster specifics on a three-master cluster started by the test: locks spread over every master, keys with
 * braces stay in their own slot, renewal of leases in many slots, and hand-offs through BLPOP on the owning node.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisClusterTest {
    private static PrivateRedisCluster cluster;

    @BeforeAll
    static void startCluster() {
        cluster = PrivateRedisCluster.start();
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void locksSpreadOverEveryMasterAndOutliveTheirLeaseWhileHeld() throws Exception {
        try (LockClient locks = Locks.open(cluster.url() + "&leaseMs=600&prefix=spread:")) {
            assertThat(locks.backend()).isEqualTo("redis-cluster");
            List<LockLease> leases = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                leases.add(locks.lock("key-{" + i + "}").tryAcquire().orElseThrow());
            }
            Set<Integer> nodesUsed = new HashSet<>();
            for (int n = 0; n < cluster.nodeList().size(); n++) {
                try (Jedis jedis = RedisTckSupport.admin(cluster.nodeList().get(n))) {
                    if (jedis.dbSize() > 0) {
                        nodesUsed.add(n);
                    }
                }
            }
            assertThat(nodesUsed).hasSize(3);
            // Three leases' worth of time: only the batched renewal (grouped per slot) can keep them.
            org.awaitility.Awaitility.await()
                    .pollDelay(Duration.ofMillis(1_800))
                    .until(() -> true);
            for (LockLease lease : leases) {
                assertThat(lease.isValid()).as("%s", lease).isTrue();
                lease.release();
            }
        }
    }

    /**
     * Renewal costs one script call per node per round, not one per slot: 120 leases in about 120 slots over three
     * masters, renewed every 200 ms, counted by each master's {@code INFO commandstats} over one second.
     */
    @Test
    void renewalSendsOneCallPerNodePerRound() throws Exception {
        try (LockClient locks = Locks.open(cluster.url() + "&leaseMs=600&prefix=pernode:")) {
            List<LockLease> leases = new ArrayList<>();
            for (int i = 0; i < 120; i++) {
                leases.add(locks.lock("renew-" + i).tryAcquire().orElseThrow());
            }
            for (redis.clients.jedis.HostAndPort node : cluster.nodeList()) {
                try (Jedis jedis = RedisTckSupport.admin(node)) {
                    jedis.configResetStat();
                }
            }
            long start = System.nanoTime();
            org.awaitility.Awaitility.await().pollDelay(Duration.ofSeconds(1)).until(() -> true);
            long[] calls = new long[cluster.nodeList().size()];
            for (int n = 0; n < calls.length; n++) {
                try (Jedis jedis = RedisTckSupport.admin(cluster.nodeList().get(n))) {
                    calls[n] = scriptCalls(jedis.info("commandstats"));
                }
            }
            double rounds = (System.nanoTime() - start) / 200e6;
            for (int n = 0; n < calls.length; n++) {
                System.out.printf(
                        java.util.Locale.ROOT,
                        "RENEWAL node %d: %d script calls in %.1f rounds = %.2f per round for 120 leases on 3 nodes%n",
                        n,
                        calls[n],
                        rounds,
                        calls[n] / rounds);
                assertThat(calls[n])
                        .as("script calls on node %d in %.1f renewal rounds", n, rounds)
                        .isLessThanOrEqualTo((long) Math.ceil(rounds) + 2);
            }
            for (LockLease lease : leases) {
                assertThat(lease.isValid()).isTrue();
                lease.release();
            }
        }
    }

    /** Calls of EVAL and EVALSHA in an {@code INFO commandstats} reply. */
    private static long scriptCalls(String commandstats) {
        long calls = 0;
        for (String line : commandstats.split("\\r?\\n")) {
            if (line.startsWith("cmdstat_eval:") || line.startsWith("cmdstat_evalsha:")) {
                String c = line.substring(line.indexOf("calls=") + "calls=".length());
                calls += Long.parseLong(c.substring(0, c.indexOf(',')));
            }
        }
        return calls;
    }

    @Test
    void braceKeysKeepTheirOwnSlot() {
        assertThat(LockKeys.of("p:", "{a}x").slot())
                .isNotEqualTo(LockKeys.of("p:", "{a}y").slot());
        LockKeys k = LockKeys.of("p:", "{a}x");
        assertThat(redis.clients.jedis.util.JedisClusterCRC16.getSlot(k.wake())).isEqualTo(k.slot());
        assertThat(redis.clients.jedis.util.JedisClusterCRC16.getSlot(k.cancel("owner")))
                .isEqualTo(k.slot());
    }

    @Test
    void contendedHandoffsOnOneKeyKeepMutualExclusion() throws Exception {
        try (LockClient a = Locks.open(cluster.url() + "&leaseMs=2000&prefix=handoff:");
                LockClient b = Locks.open(cluster.url() + "&leaseMs=2000&prefix=handoff:")) {
            ExecutorService pool = Executors.newFixedThreadPool(4);
            AtomicInteger inside = new AtomicInteger();
            AtomicInteger violations = new AtomicInteger();
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                LockClient client = t % 2 == 0 ? a : b;
                results.add(pool.submit(() -> {
                    long last = 0;
                    for (int i = 0; i < 25; i++) {
                        try (LockLease lease = client.lock("hot").acquire(Duration.ofSeconds(20))) {
                            if (inside.incrementAndGet() != 1) {
                                violations.incrementAndGet();
                            }
                            assertThat(lease.fencingToken()).isGreaterThan(last);
                            last = lease.fencingToken();
                            inside.decrementAndGet();
                        }
                    }
                    return 25;
                }));
            }
            int total = 0;
            for (Future<Integer> f : results) {
                total += f.get(60, TimeUnit.SECONDS);
            }
            pool.shutdownNow();
            assertThat(total).isEqualTo(100);
            assertThat(violations.get()).isZero();
        }
    }

    /** A key of this run whose slot is on master {@code node} (each master owns a third of the slots). */
    static String keyOnNode(String prefix, int node) {
        return keyOnNode(prefix, node, "on-");
    }

    /**
     * As {@link #keyOnNode(String, int)}, for keys named {@code base + node + "-" + i}: a test that runs after one
     * that migrated the slot of an "on-" key to another master uses a base of its own.
     */
    private static String keyOnNode(String prefix, int node, String base) {
        int perNode = 16384 / 3;
        for (int i = 0; ; i++) {
            String key = base + node + "-" + i;
            int slot =
                    org.locksmith.lock.redis.internal.LockKeys.of(prefix, key).slot();
            if (slot / perNode == node && slot < 3 * perNode) {
                return key;
            }
        }
    }

    /** Renewal outcomes are per lease: a master that stops answering costs only the leases in its slots. */
    @Test
    void leasesOnHealthyNodesStayValidWhileAnotherNodeIsDown() throws Exception {
        String prefix = "renew-partial:";
        try (LockClient locks =
                Locks.open(cluster.url() + "&leaseMs=1500&timeoutMs=200&connectTimeoutMs=200&prefix=" + prefix)) {
            LockLease onDown =
                    locks.lock(keyOnNode(prefix, 0, "partial-")).tryAcquire().orElseThrow();
            LockLease onOne =
                    locks.lock(keyOnNode(prefix, 1, "partial-")).tryAcquire().orElseThrow();
            LockLease onTwo =
                    locks.lock(keyOnNode(prefix, 2, "partial-")).tryAcquire().orElseThrow();
            cluster.node(0).pause();
            try {
                Thread.sleep(3_000); // two lease times
                assertThat(onDown.isValid()).as("lease on the paused master").isFalse();
                assertThat(onOne.isValid())
                        .as("lease on master 1 while master 0 is paused")
                        .isTrue();
                assertThat(onTwo.isValid())
                        .as("lease on master 2 while master 0 is paused")
                        .isTrue();
            } finally {
                cluster.node(0).resume();
            }
            onOne.release();
            onTwo.release();
        }
    }

    @Test
    void aLeaseLostOnAHealthyNodeIsReportedWhileAnotherNodeIsDown() throws Exception {
        String prefix = "renew-fail:";
        // Renewal every 2 s; a lost lease noticed only by its local expiry would take up to 6 s.
        try (LockClient locks =
                Locks.open(cluster.url() + "&leaseMs=6000&timeoutMs=200&connectTimeoutMs=200&prefix=" + prefix)) {
            String down = keyOnNode(prefix, 0);
            String healthy = keyOnNode(prefix, 1);
            LockLease onDown = locks.lock(down).tryAcquire().orElseThrow();
            LockLease onHealthy = locks.lock(healthy).tryAcquire().orElseThrow();
            java.util.concurrent.CountDownLatch lost = new java.util.concurrent.CountDownLatch(1);
            onHealthy.onLost(e -> lost.countDown());
            cluster.node(0).pause();
            try {
                long deletedAt = System.nanoTime();
                try (Jedis jedis = RedisTckSupport.admin(cluster.nodeList().get(1))) {
                    assertThat(jedis.del(org.locksmith.lock.redis.internal.LockKeys.of(prefix, healthy)
                                    .hash()))
                            .isEqualTo(1);
                }
                assertThat(lost.await(10, java.util.concurrent.TimeUnit.SECONDS))
                        .isTrue();
                assertThat(Duration.ofNanos(System.nanoTime() - deletedAt))
                        .as("loss on node 1 reported by the renewal, although node 0 failed in the same round")
                        .isLessThan(Duration.ofMillis(3_500));
            } finally {
                cluster.node(0).resume();
            }
            assertThat(onHealthy.isValid()).isFalse();
            assertThat(onDown.key()).isEqualTo(down);
        }
    }

    @Test
    void aWaiterFollowsItsSlotToAnotherNode() throws Exception {
        String prefix = "moved:";
        try (LockClient holder = Locks.open(cluster.url() + "&leaseMs=30000&prefix=" + prefix);
                LockClient waiting = Locks.open(cluster.url() + "&leaseMs=30000&prefix=" + prefix)) {
            String key = keyOnNode(prefix, 0);
            org.locksmith.lock.redis.internal.LockKeys keys =
                    org.locksmith.lock.redis.internal.LockKeys.of(prefix, key);
            LockLease held = holder.lock(key).acquire(Duration.ofSeconds(1));
            java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newSingleThreadExecutor();
            java.util.concurrent.Future<Long> granted = pool.submit(() -> {
                try (LockLease lease = waiting.lock(key).acquire(Duration.ofSeconds(30))) {
                    return lease.fencingToken();
                }
            });
            HostAndPort from = cluster.nodeList().get(0);
            HostAndPort to = cluster.nodeList().get(1);
            try (Jedis source = RedisTckSupport.admin(from);
                    Jedis target = RedisTckSupport.admin(to)) {
                await().atMost(Duration.ofSeconds(5)).until(() -> RedisTckSupport.blockedClients(source, null) == 1);
                // Move the lock's slot from master 0 to master 1, keys and all, as redis-cli --cluster reshard does.
                int slot = keys.slot();
                String sourceId = source.clusterMyId();
                String targetId = target.clusterMyId();
                target.clusterSetSlotImporting(slot, sourceId);
                source.clusterSetSlotMigrating(slot, targetId);
                for (String k : source.clusterGetKeysInSlot(slot, 100)) {
                    source.migrate(to.getHost(), to.getPort(), k, 0, 5_000);
                }
                for (HostAndPort n : cluster.nodeList()) {
                    try (Jedis j = RedisTckSupport.admin(n)) {
                        j.clusterSetSlotNode(slot, targetId);
                    }
                }
                // The waiter's BLPOP on master 0 is redirected; it must block again on master 1, not fail.
                await().atMost(Duration.ofSeconds(5)).until(() -> RedisTckSupport.blockedClients(target, null) == 1);
                held.release();
                assertThat(granted.get(10, java.util.concurrent.TimeUnit.SECONDS))
                        .isGreaterThan(held.fencingToken());
            } finally {
                pool.shutdownNow();
            }
        }
    }

    /**
     * While a slot migrates, Redis answers TRYAGAIN to a multi-key script whose keys are split between the two nodes
     * (here the lock's hash moved, its wake-up list not yet). A release then waits for the migration to end, with
     * back-off, instead of failing and leaving the key locked until its lease ends.
     */
    @Test
    void aReleaseRetriesTryAgainWhileItsSlotMigrates() throws Exception {
        String prefix = "tryagain:";
        try (LockClient holder = Locks.open(cluster.url() + "&leaseMs=30000&prefix=" + prefix);
                LockClient other = Locks.open(cluster.url() + "&leaseMs=30000&prefix=" + prefix)) {
            String key = keyOnNode(prefix, 0, "tryagain-"); // a slot no other test moves
            org.locksmith.lock.redis.internal.LockKeys keys =
                    org.locksmith.lock.redis.internal.LockKeys.of(prefix, key);
            LockLease held = holder.lock(key).acquire(Duration.ofSeconds(1));
            HostAndPort from = cluster.nodeList().get(0);
            HostAndPort to = cluster.nodeList().get(1);
            java.util.concurrent.ScheduledExecutorService later =
                    java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
            try (Jedis source = RedisTckSupport.admin(from);
                    Jedis target = RedisTckSupport.admin(to)) {
                int slot = keys.slot();
                String targetId = target.clusterMyId();
                target.clusterSetSlotImporting(slot, source.clusterMyId());
                source.clusterSetSlotMigrating(slot, targetId);
                source.migrate(to.getHost(), to.getPort(), keys.hash(), 0, 5_000);
                long migrationEndsMs = 600;
                later.schedule(
                        () -> {
                            for (HostAndPort n : cluster.nodeList()) {
                                try (Jedis j = RedisTckSupport.admin(n)) {
                                    j.clusterSetSlotNode(slot, targetId);
                                }
                            }
                        },
                        migrationEndsMs,
                        java.util.concurrent.TimeUnit.MILLISECONDS);
                long start = System.nanoTime();
                held.release();
                long took = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                System.out.printf(
                        "[redis] release during a slot migration: %d ms (migration ended at %d ms)%n",
                        took, migrationEndsMs);
                assertThat(took).isGreaterThanOrEqualTo(migrationEndsMs - 100);
            } finally {
                later.shutdown();
            }
            try (LockLease next = other.lock(key).tryAcquire().orElseThrow()) {
                assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
            }
        }
    }
}
