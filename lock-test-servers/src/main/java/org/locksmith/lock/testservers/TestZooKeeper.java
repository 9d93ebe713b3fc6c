package org.locksmith.lock.testservers;

import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Finds the ZooKeeper for tests, in CONTRIBUTING.md's order: {@value #ENVIRONMENT_VARIABLE}, else an {@link
 * EmbeddedZooKeeper} in this JVM. Tests share a server named by the environment with others, so they work under a
 * root node of their own and never restart, stop or wipe it; tests that do use an {@link EmbeddedZooKeeper} of their
 * own.
 */
public final class TestZooKeeper {
    /** The environment variable that names the server to use ({@code zookeeper://host:port[,host:port...]}). */
    public static final String ENVIRONMENT_VARIABLE = "LOCKSMITH_TEST_ZOOKEEPER_URL";

    private static final ReentrantLock SHARED_LOCK = new ReentrantLock();
    private static EmbeddedZooKeeper shared;

    private TestZooKeeper() {}

    /**
     * The connect string of the server named by the environment.
     *
     * @return {@code host:port[,host:port...]} from {@value #ENVIRONMENT_VARIABLE} (its path and parameters left
     *     out), or empty if the variable is unset
     * @throws IllegalStateException if the variable is not a {@code zookeeper://} URL
     */
    public static Optional<String> environmentConnectString() {
        String url = System.getenv(ENVIRONMENT_VARIABLE);
        if (url == null || url.isBlank()) {
            return Optional.empty();
        }
        String rest = url.trim();
        if (!rest.startsWith("zookeeper://")) {
            throw new IllegalStateException(ENVIRONMENT_VARIABLE + " must be a zookeeper:// URL such as"
                    + " zookeeper://127.0.0.1:2181, got '" + url + "'");
        }
        rest = rest.substring("zookeeper://".length());
        int end = rest.indexOf('/');
        int query = rest.indexOf('?');
        if (end < 0 || (query >= 0 && query < end)) {
            end = query;
        }
        return Optional.of(end < 0 ? rest : rest.substring(0, end));
    }

    /**
     * The connect string of one server shared by every test of this JVM: the environment's, else an {@link
     * EmbeddedZooKeeper} started on the first call and stopped when the JVM exits.
     *
     * @return {@code host:port[,host:port...]}
     * @throws IllegalStateException if the variable is malformed or the embedded server cannot start
     */
    public static String sharedConnectString() {
        Optional<String> given = environmentConnectString();
        if (given.isPresent()) {
            return given.get();
        }
        SHARED_LOCK.lock();
        try {
            if (shared == null) {
                EmbeddedZooKeeper started = new EmbeddedZooKeeper();
                Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(started), "locksmith-test-zookeeper-stop"));
                shared = started;
            }
            return shared.connectString();
        } finally {
            SHARED_LOCK.unlock();
        }
    }

    private static void stop(EmbeddedZooKeeper server) {
        try {
            server.close();
        } catch (IOException e) {
            // the JVM is exiting; its data directory is a temporary one
        }
    }
}
