package org.locksmith.lock.redis;

import java.io.IOException;
import java.util.Optional;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import redis.embedded.RedisServer;

/**
 * The Redis a test class runs against, found in the order of DESIGN.md: {@code LOCKSMITH_TEST_REDIS_URL}, else
 * Testcontainers when a Docker engine answers, else an embedded Redis (embedded-redis, Redis 6.2) started here.
 * Close it in {@code @AfterAll}; closing stops only what this class started.
 */
final class TestRedis implements AutoCloseable {
    static final String ENVIRONMENT_VARIABLE = "LOCKSMITH_TEST_REDIS_URL";

    private final String url;
    private final String origin;
    private final AutoCloseable stop;

    private TestRedis(String url, String origin, AutoCloseable stop) {
        this.url = url;
        this.origin = origin;
        this.stop = stop;
    }

    /** The discovery order above. */
    static TestRedis discover() {
        String given = System.getenv(ENVIRONMENT_VARIABLE);
        if (given != null && !given.isBlank()) {
            return new TestRedis(given.trim(), ENVIRONMENT_VARIABLE, () -> {});
        }
        Optional<TestRedis> container = container();
        return container.orElseGet(TestRedis::embedded);
    }

    /** An embedded Redis, whatever the environment says: the fresh-machine path. */
    @SuppressWarnings("deprecation")
    static TestRedis embedded() {
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
            return new TestRedis("redis://127.0.0.1:" + port, "embedded-redis on port " + port, server::stop);
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException(
                    "No Redis for the tests: set " + ENVIRONMENT_VARIABLE
                            + " (for example redis://127.0.0.1:6379), start Docker, or let embedded-redis run (it failed: "
                            + e + ")",
                    e);
        }
    }

    private static Optional<TestRedis> container() {
        boolean docker;
        try {
            docker = DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException | LinkageError e) {
            docker = false;
        }
        if (!docker) {
            return Optional.empty();
        }
        GenericContainer<?> redis = new GenericContainer<>("redis:7.2").withExposedPorts(6379);
        redis.start();
        return Optional.of(new TestRedis(
                "redis://" + redis.getHost() + ":" + redis.getMappedPort(6379),
                "Testcontainers redis:7.2",
                redis::stop));
    }

    String url() {
        return url;
    }

    String origin() {
        return origin;
    }

    @Override
    public void close() {
        try {
            stop.close();
        } catch (Exception e) {
            throw new IllegalStateException("Could not stop " + origin, e);
        }
    }
}
