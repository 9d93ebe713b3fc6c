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
import org.locksmith.lock.testservers.EmbeddedZooKeeper;
import org.locksmith.lock.testservers.TestZooKeeper;

/**
 * The TCK on one ZooKeeper server: the one at {@code LOCKSMITH_TEST_ZOOKEEPER_URL} when set, else a private
 * in-process server (curator-test). Clients use a 2 s session timeout and a 2 s connection timeout. Restart and
 * outage faults are offered only on the private server, never on a shared one.
 *
 * <p>The default run runs this class with the client used from virtual threads, on the newest JDK of the machine
 * ({@link ZooKeeperVirtualThreadTckTest}); tagged {@code thorough}, {@code -Pthorough} runs it on platform threads too.
 */
@Tag("thorough")
class ZooKeeperTckTest extends LockTck {
    static final long SESSION_MS = 2_000;
    static final long CONNECTION_MS = 2_000;

    private static EmbeddedZooKeeper embedded;
    private static String connectString;
    private static String root;
    private static CuratorFramework admin;

    @BeforeAll
    static void startServer() {
        connectString = TestZooKeeper.environmentConnectString().orElseGet(() -> {
            embedded = new EmbeddedZooKeeper();
            return embedded.connectString();
        });
        root = ZooKeeperTestSupport.uniqueRoot("tck");
        admin = ZooKeeperTestSupport.admin(connectString);
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (admin != null) {
            admin.close();
        }
        if (embedded != null) {
            embedded.close();
        }
    }

    private static String url() {
        return "zookeeper://" + connectString + root + "?sessionTimeoutMs=" + SESSION_MS + "&connectionTimeoutMs="
                + CONNECTION_MS;
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
        return embedded == null ? OptionalLong.empty() : OptionalLong.of(embedded.requestsReceived());
    }

    @Override
    protected OptionalInt storeEntries(String key) {
        return ZooKeeperTestSupport.storeEntries(admin, lockPath(key));
    }

    private static String lockPath(String key) {
        return root + "/" + org.locksmith.lock.zookeeper.internal.LockNodes.encodeKey(key);
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
            /**
             * RESTART_STORE restarts the in-process server on its data directory: the sessions and their nodes
             * survive it, so C01.9 sees either the lock kept or, when the session checks failed for longer than the
             * session under load, the holder told and its node deleted by the core's release of the lost lease.
             */
            @Override
            public Set<Fault> supported() {
                return embedded == null
                        ? Set.of(Fault.KILL_SESSION, Fault.DELETE_LOCK_STATE)
                        : Set.of(Fault.KILL_SESSION, Fault.DELETE_LOCK_STATE, Fault.STORE_OUTAGE, Fault.RESTART_STORE);
            }

            @Override
            public void killSession(LockClient client) {
                ZooKeeperTestSupport.expireSession(
                        ZooKeeperTestSupport.backendOf(client).curator(), connectString);
            }

            @Override
            public void deleteLockState(String key) {
                ZooKeeperTestSupport.deleteLockState(admin, lockPath(key));
            }

            @Override
            public void restartStore() {
                embedded.restart();
            }

            @Override
            public Outage beginOutage() {
                AutoCloseable stopped = embedded.stop();
                return () -> {
                    try {
                        stopped.close();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                };
            }
        };
    }
}
