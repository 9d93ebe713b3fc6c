package org.locksmith.lock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.testservers.EmbeddedZooKeeper;

/**
 * Round trips counted by the server itself: the {@code Received:} counter of the {@code srvr} four-letter word on a
 * private server, read before and after each operation. Sessions are long (30 s, a ping every 10 s) and each count
 * is the minimum of several runs, so that a heartbeat falling inside a window cannot inflate it. The container
 * reaper is slowed to an hour so that a lock parent stays between two acquires of the same key.
 */
class ZooKeeperRoundTripTest {
    private static final int RUNS = 5;
    private static EmbeddedZooKeeper server;
    private static CuratorFramework curator;
    private static LockClient ours;

    @BeforeAll
    static void start() {
        server = new EmbeddedZooKeeper(3_600_000);
        curator = ZooKeeperTestSupport.admin(server.connectString());
        ours = Locks.open(server.url("/rt/ours", 30_000, 5_000));
    }

    @AfterAll
    static void stop() throws Exception {
        ours.close();
        curator.close();
        server.close();
    }

    private interface Op {
        void run() throws Exception;
    }

    /** What reading the counter costs: the server counts the {@code srvr} command itself. */
    private static long overhead = -1;

    /** The fewest requests the server received during {@code op} over {@link #RUNS} runs, less the overhead. */
    private static long requests(String what, Op op) throws Exception {
        if (overhead < 0) {
            overhead = 0;
            overhead = requests("reading the counter", () -> {});
            assertThat(overhead).as("srvr overhead").isBetween(0L, 1L);
        }
        long fewest = Long.MAX_VALUE;
        for (int i = 0; i < RUNS; i++) {
            long before = server.requestsReceived();
            op.run();
            fewest = Math.min(fewest, server.requestsReceived() - before - overhead);
        }
        System.out.printf("[zookeeper] %s: %d requests%n", what, fewest);
        return fewest;
    }

    private static int next;

    private static String freshKey() {
        return "k" + next++;
    }

    @Test
    void uncontendedAcquireAndReleaseCostNoMoreThanInterProcessMutexAndReentryCostsNone() throws Exception {
        // Warm up both roots so that only the key's own parent may be missing.
        ours.lock("warm").acquire(Duration.ofSeconds(5)).release();
        InterProcessMutex warm = new InterProcessMutex(curator, "/rt/ipm/warm");
        warm.acquire();
        warm.release();

        long oursFresh = requests("locksmith acquire+release, new key", () -> {
            ours.lock(freshKey()).acquire(Duration.ofSeconds(5)).release();
        });
        long ipmFresh = requests("InterProcessMutex acquire+release, new key", () -> {
            InterProcessMutex m = new InterProcessMutex(curator, "/rt/ipm/" + freshKey());
            m.acquire();
            m.release();
        });
        long oursHot = requests("locksmith acquire+release, parent exists", () -> {
            ours.lock("hot").acquire(Duration.ofSeconds(5)).release();
        });
        InterProcessMutex hot = new InterProcessMutex(curator, "/rt/ipm/hot");
        long ipmHot = requests("InterProcessMutex acquire+release, parent exists", () -> {
            hot.acquire();
            hot.release();
        });
        assertThat(oursFresh).isPositive().isLessThanOrEqualTo(ipmFresh);
        assertThat(oursHot).isPositive().isLessThanOrEqualTo(ipmHot);
        assertThat(oursHot).isEqualTo(3); // create2, getChildren, delete

        try (LockLease outer = ours.lock("reentry").acquire(Duration.ofSeconds(5))) {
            long reentry = requests("locksmith re-entry acquire+release", () -> {
                ours.lock("reentry").acquire(Duration.ofSeconds(5)).release();
            });
            assertThat(reentry).isZero();
            assertThat(outer.holdCount()).isEqualTo(1);
        }
    }
}
