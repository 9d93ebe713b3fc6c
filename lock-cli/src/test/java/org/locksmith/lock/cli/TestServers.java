package org.locksmith.lock.cli;

import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;
import org.locksmith.lock.cli.internal.EmbeddedZooKeeper;

/**
 * The servers of these tests, found as DESIGN.md says: the environment ({@code LOCKSMITH_TEST_REDIS_URL},
 * {@code LOCKSMITH_TEST_MYSQL_URL}, {@code LOCKSMITH_TEST_ZOOKEEPER_URL}), else Redis and MySQL at their default local
 * ports and an in-process ZooKeeper (curator-test). A server that cannot be reached fails the test with what to
 * start or set.
 */
final class TestServers {
    private TestServers() {}

    private static EmbeddedZooKeeper zookeeper;

    static String redis() {
        return reachable("REDIS", env("LOCKSMITH_TEST_REDIS_URL", "redis://127.0.0.1:6379"));
    }

    static String mysql() {
        return reachable("MYSQL", env("LOCKSMITH_TEST_MYSQL_URL", "mysql://root@127.0.0.1:3306/test"));
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

    private static String env(String name, String otherwise) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? otherwise : v.trim();
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
