package org.locksmith.lock.zookeeper;

import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.tck.LockFaults;
import org.locksmith.lock.tck.LockTck;
import org.locksmith.lock.tck.TckTimings;
import org.locksmith.lock.testservers.EmbeddedEnsemble;
import org.locksmith.lock.zookeeper.internal.LockNodes;

/**
 * The TCK against a private three-server ensemble: clients spread over the servers, so every contract also runs
 * with holder and waiters on different servers (writes through the leader, watches from followers). Faults:
 * session kill and lock-state deletion; restarts and outages of an ensemble are covered by {@link
 * ZooKeeperEnsembleTest}.
 *
 * <p>Tagged {@code thorough} ({@code -Pthorough}): the default run has the TCK on one server (on virtual threads)
 * and the ensemble's own leader-failure test ({@link ZooKeeperEnsembleTest}), and keeps the build within its time.
 */
@Tag("thorough")
class ZooKeeperEnsembleTckTest extends LockTck {
    static final long SESSION_MS = 2_000;
    static final long CONNECTION_MS = 2_000;

    private static EmbeddedEnsemble ensemble;
    private static String root;
    private static CuratorFramework admin;

    @BeforeAll
    static void startEnsemble() {
        ensemble = new EmbeddedEnsemble();
        root = ZooKeeperTestSupport.uniqueRoot("ensemble-tck");
        admin = ZooKeeperTestSupport.admin(ensemble.connectString());
    }

    @AfterAll
    static void stopEnsemble() throws Exception {
        if (admin != null) {
            admin.close();
        }
        if (ensemble != null) {
            ensemble.close();
        }
    }

    private static String url() {
        return "zookeeper://" + ensemble.connectString() + root + "?sessionTimeoutMs=" + SESSION_MS
                + "&connectionTimeoutMs=" + CONNECTION_MS;
    }

    private static String lockPath(String key) {
        return root + "/" + LockNodes.encodeKey(key);
    }

    @Override
    protected LockClient newClient() {
        return ZooKeeperTestSupport.open(url());
    }

    @Override
    protected Optional<String> workerUrl() {
        return Optional.of(url());
    }

    /** From the embedded server(s): {@code srvr}'s "Received"; empty against a server named by the environment. */
    @Override
    protected OptionalLong storeOperations() {
        return OptionalLong.of(ensemble.requestsReceived());
    }

    @Override
    protected OptionalInt storeEntries(String key) {
        // Read through a follower possibly behind the leader: sync first so that the count is current.
        try {
            admin.sync().forPath(lockPath(key));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        return ZooKeeperTestSupport.storeEntries(admin, lockPath(key));
    }

    @Override
    protected TckTimings timings() {
        return TckTimings.defaults()
                .withSessionTimeout(ZooKeeperTestSupport.millis(SESSION_MS))
                // A call cut off by the server's death can also wait out the ZooKeeper client's reconnection
                // back-off (up to 1 s) before it fails; see the README, "Unavailable store".
                .withOperationTimeout(ZooKeeperTestSupport.millis(CONNECTION_MS + 1_000));
    }

    @Override
    protected LockFaults faults() {
        return new LockFaults() {
            @Override
            public Set<Fault> supported() {
                return Set.of(Fault.KILL_SESSION, Fault.DELETE_LOCK_STATE);
            }

            @Override
            public void killSession(LockClient client) {
                ZooKeeperTestSupport.expireSession(
                        ZooKeeperTestSupport.backendOf(client).curator(), ensemble.connectString());
            }

            @Override
            public void deleteLockState(String key) {
                ZooKeeperTestSupport.deleteLockState(admin, lockPath(key));
            }
        };
    }
}
