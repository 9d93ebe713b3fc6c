package org.locksmith.lock.testservers;

import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import org.testcontainers.containers.GenericContainer;
import redis.embedded.RedisServer;

/**
 * The Redis a test class runs against, found in the order of CONTRIBUTING.md: {@value #ENVIRONMENT_VARIABLE}, else
 * Testcontainers ({@code redis:7.2}) when a Docker engine answers, else an embedded Redis (embedded-redis, Redis 6.2)
 * started here. Close it in {@code @AfterAll}; closing stops only what was started for it, never the environment's
 * server. Tests never flush it: they isolate themselves with key prefixes of their own.
 *
 * <p>A server started here has been up for a moment, and Locksmith's Redis client grants nothing until a server has
 * been up for its restart hold-off (by default the lease, 30 s). Lock URLs come from {@link #lockUrl(String)} and
 * {@link #sharedLockUrl(String)}, which turn the hold-off off for such a server only: it was started empty for this
 * run, so no holder can believe it holds a lock the server forgot. A server named by {@value #ENVIRONMENT_VARIABLE}
 * keeps the default, as an application's server would.
 */
public final class TestRedis implements AutoCloseable {
    /** The environment variable that names the Redis to use ({@code redis://host:port}); it wins over the rest. */
    public static final String ENVIRONMENT_VARIABLE = "LOCKSMITH_TEST_REDIS_URL";

    private static final ReentrantLock SHARED_LOCK = new ReentrantLock();
    private static TestRedis shared;

    private final String url;
    private final String origin;
    private final AutoCloseable stop;
    private final boolean startedHere;

    private TestRedis(String url, String origin, AutoCloseable stop, boolean startedHere) {
        this.url = url;
        this.origin = origin;
        this.stop = stop;
        this.startedHere = startedHere;
    }

    /**
     * Finds or starts a Redis in the order above.
     *
     * @return the server, to be closed by the caller
     * @throws IllegalStateException saying what to set or start, if no Redis can be had
     */
    public static TestRedis discover() {
        String given = System.getenv(ENVIRONMENT_VARIABLE);
        if (given != null && !given.isBlank()) {
            return new TestRedis(given.trim(), ENVIRONMENT_VARIABLE, () -> {}, false);
        }
        Optional<TestRedis> container = container();
        return container.orElseGet(TestRedis::embedded);
    }

    /**
     * The URL of one Redis shared by every test of this JVM: found as {@link #discover()} does on the first call and
     * stopped when the JVM exits.
     *
     * @return as {@link #url()}
     * @throws IllegalStateException saying what to set or start, if no Redis can be had
     */
    public static String sharedUrl() {
        return shared().url;
    }

    private static TestRedis shared() {
        SHARED_LOCK.lock();
        try {
            if (shared == null) {
                TestRedis found = discover();
                Runtime.getRuntime().addShutdownHook(new Thread(found::close, "locksmith-test-redis-stop"));
                shared = found;
            }
            return shared;
        } finally {
            SHARED_LOCK.unlock();
        }
    }

    /**
     * The shared server ({@link #sharedUrl()}) as a Locksmith lock URL: see {@link #lockUrl(String)}.
     *
     * @param params query parameters joined by {@code &}, such as {@code leaseMs=2000&prefix=my-test:}, or empty
     * @return the lock URL
     * @throws IllegalStateException saying what to set or start, if no Redis can be had
     */
    public static String sharedLockUrl(String params) {
        return shared().lockUrl(params);
    }

    /**
     * Starts an embedded Redis on a free loopback port, whatever the environment says: the fresh-machine path.
     *
     * @return the server, to be closed by the caller
     * @throws IllegalStateException saying what to set or install, if it cannot start
     */
    @SuppressWarnings("deprecation")
    public static TestRedis embedded() {
        try {
            int port = PrivateRedis.freePort();
            RedisServer server = RedisServer.newRedisServer()
                    .port(port)
                    .bind("127.0.0.1")
                    .setting("save \"\"")
                    .setting("appendonly no")
                    .onShutdownForceStop(true)
                    .build();
            server.start();
            return new TestRedis("redis://127.0.0.1:" + port, "embedded-redis on port " + port, server::stop, true);
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException(
                    "No Redis for the tests: set " + ENVIRONMENT_VARIABLE
                            + " (for example redis://127.0.0.1:6379), start Docker, or let embedded-redis run (it failed: "
                            + e + ")",
                    e);
        }
    }

    private static Optional<TestRedis> container() {
        if (!Docker.answers()) {
            return Optional.empty();
        }
        GenericContainer<?> redis = new GenericContainer<>("redis:7.2").withExposedPorts(6379);
        redis.start();
        return Optional.of(new TestRedis(
                "redis://" + redis.getHost() + ":" + redis.getMappedPort(6379),
                "Testcontainers redis:7.2",
                redis::stop,
                true));
    }

    /**
     * Where the server answers.
     *
     * @return the environment's URL as given, else {@code redis://host:port}
     */
    public String url() {
        return url;
    }

    /**
     * {@link #url()} as a Locksmith lock URL with {@code params}, and with {@code restartHoldOffMs=0} if the server
     * was started for these tests (embedded or a container): it started empty, so the hold-off would only refuse
     * every lock for its first lease time. A server named by {@value #ENVIRONMENT_VARIABLE} keeps its hold-off.
     *
     * @param params query parameters joined by {@code &}, or empty
     * @return the lock URL
     */
    public String lockUrl(String params) {
        String query = startedHere ? "restartHoldOffMs=0" + (params.isEmpty() ? "" : "&" + params) : params;
        return query.isEmpty() ? url : url + "?" + query;
    }

    /**
     * Stops the server if it was started for this instance; a server named by the environment is left alone.
     *
     * @throws IllegalStateException if the server could not be stopped
     */
    @Override
    public void close() {
        try {
            stop.close();
        } catch (Exception e) {
            throw new IllegalStateException("Could not stop " + origin, e);
        }
    }
}
