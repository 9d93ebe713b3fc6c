package org.locksmith.lock.zookeeper;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.locksmith.lock.testsupport.ForkedJUnit;

/**
 * The single-server TCK ({@link ZooKeeperTckTest}) with the client used from virtual threads, on the newest JDK of
 * the machine, in a JVM of its own: interrupts, tries and releases on virtual threads, whose Curator calls wait on
 * monitors and latches.
 */
class ZooKeeperVirtualThreadTckTest {
    @Test
    @Timeout(600)
    void tckPassesOnVirtualThreads() throws Exception {
        ForkedJUnit.runTckOnVirtualThreads(ZooKeeperTckTest.class, Duration.ofMinutes(9));
    }
}
