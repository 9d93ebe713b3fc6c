package org.locksmith.lock.redis;

import java.util.concurrent.locks.ReentrantLock;
import redis.clients.jedis.Jedis;

/**
 * lock-redis's test helpers ({@link TestRedis}, {@link PrivateRedis}; package-private there, and taken from its
 * test-jar) opened to lock-cli's tests, so that both find and start Redis servers the same way.
 */
public final class RedisTestServers {
    private static final ReentrantLock LOCK = new ReentrantLock();
    private static TestRedis shared;

    private RedisTestServers() {}

    /**
     * The URL of the Redis these tests share: {@code LOCKSMITH_TEST_REDIS_URL}, else Testcontainers, else an
     * embedded Redis started once for this JVM.
     *
     * @throws IllegalStateException saying what to set or start, if there is none
     */
    public static String url() {
        LOCK.lock();
        try {
            if (shared == null) {
                TestRedis found = TestRedis.discover();
                Runtime.getRuntime().addShutdownHook(new Thread(found::close, "cli-test-redis-stop"));
                shared = found;
            }
            // The restart hold-off off: these tests are not about restarts, and a server just started would
            // otherwise grant nothing for a lease time.
            return shared.url() + "?restartHoldOffMs=0";
        } finally {
            LOCK.unlock();
        }
    }

    /** A redis-server of one test alone, on a free port of 127.0.0.1: it may be stopped or paused. */
    public static final class Private implements AutoCloseable {
        private final PrivateRedis redis = PrivateRedis.start();

        /** Its URL, {@code redis://127.0.0.1:PORT?restartHoldOffMs=0}: add parameters with {@code &}. */
        public String url() {
            return redis.url("");
        }

        /** A plain connection for the test's own commands; close it after use. */
        public Jedis jedis() {
            return redis.jedis();
        }

        /** SIGSTOP: it keeps its socket open and answers nothing. */
        public void pause() {
            redis.pause();
        }

        /** Kills the server (SIGKILL) and removes its files. */
        @Override
        public void close() {
            redis.close();
        }
    }
}
