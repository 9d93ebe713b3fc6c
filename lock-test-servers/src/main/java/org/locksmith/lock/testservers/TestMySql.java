package org.locksmith.lock.testservers;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;

/**
 * Finds the MySQL server for tests, in CONTRIBUTING.md's order: {@value #ENVIRONMENT_VARIABLE} (such as {@code
 * mysql://root@127.0.0.1:3306/test}); else, when a Docker engine answers, a {@code mysql:8.4} container started once
 * per test JVM (Testcontainers); else an embedded MariaDB ({@link EmbeddedMariaDb}) started once per test JVM. Where
 * no engine exists the Docker check fails in well under a second. What this class starts stops when the JVM exits;
 * tests never drop or empty the server's database: they isolate themselves with tables or databases of their own.
 */
public final class TestMySql {
    /** The environment variable that names the server to use ({@code mysql://user[:password]@host:port/db}). */
    public static final String ENVIRONMENT_VARIABLE = "LOCKSMITH_TEST_MYSQL_URL";

    private static final ReentrantLock LOCK = new ReentrantLock();
    private static String embeddedUrl;
    private static String containerUrl; // "" once found that no Docker engine answers

    private TestMySql() {}

    /**
     * The server the tests use, found or started on the first call as above.
     *
     * @return its base URL ({@code mysql://user@host:port/db}, no parameters)
     * @throws IllegalStateException saying what to set, if no server can be had
     */
    public static String baseUrl() {
        String url = System.getenv(ENVIRONMENT_VARIABLE);
        if (url != null && !url.isBlank()) {
            return url.trim();
        }
        LOCK.lock();
        try {
            if (containerUrl == null) {
                containerUrl = startContainer().orElse("");
            }
        } finally {
            LOCK.unlock();
        }
        return containerUrl.isEmpty() ? embeddedUrl() : containerUrl;
    }

    /** A {@code mysql:8.4} container if a Docker engine answers (stopped by Testcontainers' reaper at JVM exit). */
    private static Optional<String> startContainer() {
        if (!Docker.answers()) {
            return Optional.empty();
        }
        GenericContainer<?> mysql = new GenericContainer<>("mysql:8.4")
                .withEnv("MYSQL_ALLOW_EMPTY_PASSWORD", "yes")
                .withEnv("MYSQL_DATABASE", "test")
                .withExposedPorts(3306)
                // The image's first server (initialisation) listens on port 0; the one to wait for says 3306.
                .waitingFor(Wait.forLogMessage(".*ready for connections.*port: 3306.*\\n", 1)
                        .withStartupTimeout(Duration.ofMinutes(3)));
        mysql.start();
        Runtime.getRuntime().addShutdownHook(new Thread(mysql::stop, "locksmith-test-mysql-container-stop"));
        return Optional.of("mysql://root@" + mysql.getHost() + ":" + mysql.getMappedPort(3306) + "/test");
    }

    /** An embedded MariaDB started by this JVM (once, on the first call): the fresh-machine path. */
    private static String embeddedUrl() {
        LOCK.lock();
        try {
            if (embeddedUrl == null) {
                EmbeddedMariaDb db = EmbeddedMariaDb.start();
                Runtime.getRuntime().addShutdownHook(new Thread(db::close, "locksmith-test-mariadb-stop"));
                embeddedUrl = db.url();
            }
            return embeddedUrl;
        } finally {
            LOCK.unlock();
        }
    }
}
