package org.locksmith.lock.redis;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.locksmith.lock.testsupport.ForkedJUnit;

/**
 * The TCK on a private {@code redis-server} ({@link RedisPrivateServerTckTest}: restarts and pauses included) with
 * the client used from virtual threads, on the newest JDK of the machine, in a JVM of its own. On a virtual thread,
 * an interrupt or an interrupt status set during socket I/O closes the socket: this proves that waiters still get
 * {@code InterruptedException} and leave nothing behind, and that releases reach the store.
 */
class RedisVirtualThreadTckTest {
    @Test
    @Timeout(600)
    void privateServerTckPassesOnVirtualThreads() throws Exception {
        ForkedJUnit.runTckOnVirtualThreads(RedisPrivateServerTckTest.class, Duration.ofMinutes(9));
    }
}
