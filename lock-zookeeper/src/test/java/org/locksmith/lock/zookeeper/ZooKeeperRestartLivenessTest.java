package org.locksmith.lock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.zookeeper.internal.LockNodes;

/**
 * A server down for longer than the sessions, then back with its data: the server restores the old sessions and
 * their nodes for one more session timeout, while the clients, which gave those sessions up, open new ones. The
 * key must be granted again once the old sessions run out on the server; no node of a live session may be left
 * blocking the queue.
 */
class ZooKeeperRestartLivenessTest {
    private static final long SESSION_MS = 2_000;

    private static EmbeddedZooKeeper server;
    private static CuratorFramework admin;
    private static String root;
    private final List<LockClient> clients = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void start() {
        server = new EmbeddedZooKeeper();
        admin = ZooKeeperTestSupport.admin(server.connectString());
        root = ZooKeeperTestSupport.uniqueRoot("restart-liveness");
    }

    @AfterAll
    static void stop() throws Exception {
        admin.close();
        server.close();
    }

    @AfterEach
    void closeClients() {
        clients.forEach(LockClient::close);
    }

    private LockClient client() {
        LockClient c = Locks.open(server.url(root, SESSION_MS, 2_000));
        clients.add(c);
        return c;
    }

    @Test
    void keyIsGrantedAgainAfterAnOutageLongerThanTheSessions() throws Exception {
        long[] outagesMs = {1_700, 2_000, 2_300, 2_600, 3_500};
        for (int round = 0; round < outagesMs.length; round++) {
            String key = "outage-" + round;
            LockClient holder = client();
            LockClient other = client();
            LockLease lease = holder.lock(key).acquire(Duration.ofSeconds(5));

            AutoCloseable stopped = server.stop();
            Thread.sleep(outagesMs[round]); // the outage: about as long as the sessions, or longer
            stopped.close();

            long servingAt = System.nanoTime();
            Optional<LockLease> granted = Optional.empty();
            long until = servingAt + Duration.ofSeconds(15).toNanos();
            List<String> failures = new ArrayList<>();
            while (granted.isEmpty() && System.nanoTime() < until) {
                try {
                    granted = other.lock(key).tryAcquire(Duration.ofNanos(until - System.nanoTime()));
                } catch (LockBackendException e) {
                    failures.add(e.getMessage());
                    Thread.sleep(20);
                }
            }
            assertThat(granted)
                    .as(
                            "round %d: not granted within 15 s after the server came back; failures %s; store: %s;"
                                    + " holder session %x, other session %x, holder valid %s",
                            round, failures, nodes(key), session(holder), session(other), lease.isValid())
                    .isPresent();
            System.out.printf(
                    "[zookeeper] outage of %d ms: serving -> grant %d ms, %d failed asks%n",
                    outagesMs[round], (System.nanoTime() - servingAt) / 1_000_000, failures.size());
            granted.get().release();
        }
    }

    private static String nodes(String key) {
        String parent = root + "/" + LockNodes.encodeKey(key);
        StringBuilder sb = new StringBuilder();
        for (String child : ZooKeeperTestSupport.children(admin, parent)) {
            try {
                Stat stat = admin.checkExists().forPath(parent + "/" + child);
                sb.append(child)
                        .append(" owner ")
                        .append(stat == null ? "gone" : Long.toHexString(stat.getEphemeralOwner()))
                        .append("; ");
            } catch (Exception e) {
                sb.append(child).append(" ").append(e).append("; ");
            }
        }
        return sb.toString();
    }

    private static long session(LockClient client) {
        try {
            return ZooKeeperTestSupport.backendOf(client)
                    .curator()
                    .getZookeeperClient()
                    .getZooKeeper()
                    .getSessionId();
        } catch (Exception e) {
            return -1;
        }
    }
}
