package org.locksmith.lock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.Locks;
import org.locksmith.lock.testservers.EmbeddedEnsemble;
import org.locksmith.lock.zookeeper.internal.LockNodes;

/**
 * A leader failure on a three-server ensemble while a lock is held and others wait: the holder's lease turns
 * invalid (its connection is suspended) and valid again after the election (its session survived), nobody else is
 * granted while its node lives, and the waiters, who keep their place across the election, are granted one at a
 * time in arrival order.
 */
class ZooKeeperEnsembleTest {
    private static EmbeddedEnsemble ensemble;
    private static CuratorFramework admin;
    private static String root;
    private final List<LockClient> clients = new CopyOnWriteArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "zk-ensemble-test");
        t.setDaemon(true);
        return t;
    });

    @BeforeAll
    static void start() {
        ensemble = new EmbeddedEnsemble();
        admin = ZooKeeperTestSupport.admin(ensemble.connectString());
        root = ZooKeeperTestSupport.uniqueRoot("ensemble");
    }

    @AfterAll
    static void stop() throws Exception {
        admin.close();
        ensemble.close();
    }

    @AfterEach
    void closeClients() throws Exception {
        threads.shutdownNow();
        clients.forEach(LockClient::close);
        assertThat(threads.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    private LockClient client() {
        // Session 4 s (the most a 200 ms tick grants) outlives an election; operations wait up to 5 s for one.
        LockClient c = Locks.open(
                "zookeeper://" + ensemble.connectString() + root + "?sessionTimeoutMs=4000&connectionTimeoutMs=5000");
        clients.add(c);
        return c;
    }

    @Test
    void leaderStopsWhileHeldAndWaitedFor() throws Exception {
        String key = "leader-change";
        String path = root + "/" + LockNodes.encodeKey(key);
        LockClient holderClient = client();
        LockLease held = holderClient.lock(key).acquire(Duration.ofSeconds(10));
        CompletableFuture<LockLostException> lost = new CompletableFuture<>();
        held.onLost(lost::complete);

        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        List<Integer> order = new CopyOnWriteArrayList<>();
        List<Long> tokens = new CopyOnWriteArrayList<>();
        tokens.add(held.fencingToken());
        List<Future<?>> waiters = new ArrayList<>();
        int waiterCount = 3;
        for (int i = 0; i < waiterCount; i++) {
            int id = i;
            LockClient c = client();
            waiters.add(threads.submit(() -> {
                LockLease lease = c.lock(key).acquire(Duration.ofSeconds(60));
                if (inside.incrementAndGet() != 1) {
                    overlaps.incrementAndGet();
                }
                order.add(id);
                tokens.add(lease.fencingToken());
                TimeUnit.MILLISECONDS.sleep(50); // the critical section's work
                inside.decrementAndGet();
                try {
                    lease.release();
                } catch (LockLostException e) {
                    // a connection that flaps again after the election makes a later lease lost too; its node
                    // still kept everyone else out until this release
                }
                return null;
            }));
            int queued = i + 2;
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> ZooKeeperTestSupport.children(admin, path).size() == queued);
        }

        InstanceSpec leader = ensemble.leader().orElseThrow();
        ensemble.kill(leader);
        List<InstanceSpec> running = new ArrayList<>(ensemble.instances());
        running.remove(leader);

        // Every client's connection is dropped (a follower without its leader stops serving): the lease cannot be
        // proved, so it is invalid; its session outlives the election, so it is proved again afterwards.
        long killedAt = System.nanoTime();
        await().atMost(Duration.ofSeconds(15)).until(() -> !held.isValid());
        await().atMost(Duration.ofSeconds(30)).until(() -> ensemble.serving(running));
        await().atMost(Duration.ofSeconds(15))
                .failFast("the hold was lost instead of surviving the election", lost::isDone)
                .until(held::isValid);
        System.out.printf(
                "[zookeeper] leader stopped while held: lease valid again %d ms after the kill, not lost%n",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt));
        // Nobody was granted while the holder's node lived.
        assertThat(order).isEmpty();
        held.release();
        for (Future<?> f : waiters) {
            f.get(60, TimeUnit.SECONDS);
        }
        assertThat(overlaps.get()).as("two holders at once").isZero();
        assertThat(order).containsExactly(0, 1, 2);
        assertThat(tokens).isSorted().doesNotHaveDuplicates();

        ensemble.restart(leader);
        await().atMost(Duration.ofSeconds(30)).until(() -> ensemble.serving(ensemble.instances()));
    }
}
