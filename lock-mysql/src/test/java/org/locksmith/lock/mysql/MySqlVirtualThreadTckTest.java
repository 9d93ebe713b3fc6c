package org.locksmith.lock.mysql;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.locksmith.lock.testsupport.ForkedJUnit;

/**
 * The {@code row} strategy's TCK ({@link MySqlRowTckTest}, on the test server) with the client used from virtual
 * threads, on the newest JDK of the machine, in a JVM of its own. On a virtual thread an interrupt closes the socket
 * of a connection in use, and HikariCP lends nothing to a thread whose interrupt status is set: this proves that
 * waiters still get {@code InterruptedException}, {@code Lock.lock()} waits on, and tries and releases reach the
 * server.
 */
class MySqlVirtualThreadTckTest {
    @Test
    @Timeout(600)
    void rowTckPassesOnVirtualThreads() throws Exception {
        ForkedJUnit.runTckOnVirtualThreads(MySqlRowTckTest.class, Duration.ofMinutes(9));
    }
}
