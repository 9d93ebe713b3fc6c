package org.locksmith.lock.redis;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.locksmith.lock.testservers.TestRedis;
import org.locksmith.lock.testsupport.ForkedJUnit;

/**
 * On Java 21-23 a virtual thread that parks while it holds a monitor pins its carrier thread; commons-pool2's return
 * path does (2.13 holds the pooled object's monitor while it takes the idle deque's lock). Runs {@link RedisPinProbe}
 * in a Java 21 JVM named by {@code LOCKSMITH_TEST_JAVA21} (a {@code java} executable): thousands of virtual threads
 * through a URL-opened client's small pool, no {@code jdk.VirtualThreadPinned} event allowed. Without that variable it
 * is skipped with a notice: no Maven artifact brings a JDK; {@code .ci/run} sets it.
 */
class RedisVirtualThreadPinTest {
    static final String JAVA21 = "LOCKSMITH_TEST_JAVA21";

    @Test
    @Timeout(300)
    void noCarrierPinnedOnJava21() throws Exception {
        String java = System.getenv(JAVA21);
        if (java == null || java.isBlank()) {
            System.out.println("[WARNING] " + RedisVirtualThreadPinTest.class.getSimpleName()
                    + " skipped: set " + JAVA21 + " to a Java 21 `java` executable (Java 21-23, where virtual"
                    + " threads pin carriers on monitors) to check that Redis connections never pin one");
            Assumptions.abort(JAVA21 + " is not set");
        }
        String url = TestRedis.sharedLockUrl("prefix=pin-probe-" + System.nanoTime() + ":");
        Path log = Path.of("target", "forked-junit", "RedisPinProbe.log");
        ForkedJUnit.Result r = ForkedJUnit.run(
                Path.of(java), RedisPinProbe.class, Map.of(RedisPinProbe.URL, url), Duration.ofMinutes(4), log);
        System.out.println("forked RedisPinProbe on " + java + ": exit " + r.exitCode() + ", " + r.succeeded()
                + " passed, " + r.failed() + " failed; log " + log);
        assertTrue(
                r.exitCode() == 0 && r.failed() == 0 && r.succeeded() == 1,
                () -> "RedisPinProbe failed on " + java + " (log " + log + "):\n" + r.tail(60));
    }
}
