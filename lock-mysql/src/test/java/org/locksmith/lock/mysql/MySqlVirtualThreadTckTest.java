package org.locksmith.lock.mysql;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.locksmith.lock.testsupport.ForkedJUnit;

/**
 * The {@code named} strategy's TCK ({@link MySqlNamedTckTest}, on the test server) with the client used from virtual
 * threads, on the newest JDK of the machine, in a JVM of its own. Of the three strategies in the default build, row
 * runs on platform threads against the embedded server ({@link EmbeddedMariaDbRowTckTest}), lease on platform
 * threads ({@link MySqlLeaseTckTest}) and named here; named and row both wait in the server on a connection held for
 * the lease, the case virtual threads make hard. On a virtual thread an interrupt closes the socket
 * of a connection in use, and HikariCP lends nothing to a thread whose interrupt status is set: this proves that
 * waiters still get {@code InterruptedException}, {@code Lock.lock()} waits on, and tries and releases reach the
 * server.
 */
class MySqlVirtualThreadTckTest {
    @Test
    @Timeout(600)
    void namedTckPassesOnVirtualThreads() throws Exception {
        ForkedJUnit.runTckOnVirtualThreads(MySqlNamedTckTest.class, Duration.ofMinutes(9));
    }
}
