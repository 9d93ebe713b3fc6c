package org.locksmith.lock.testservers;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;

/**
 * Finds the PostgreSQL server for tests, in CONTRIBUTING.md's order: {@value #ENVIRONMENT_VARIABLE} (such as {@code
 * postgresql://postgres@127.0.0.1:5432/test}); else, when a Docker engine answers, a {@code postgres:17} container
 * started once per test JVM (Testcontainers); else a {@link PrivatePostgres} started once per test JVM, from the
 * machine's PostgreSQL binaries or, where it has none, zonky's PostgreSQL 17 binaries from Maven Central (so a machine
 * with only a JDK passes). What this class starts stops when the JVM exits; tests isolate themselves with tables of
 * their own and never empty the server's database.
 */
public final class TestPostgres {
    /** The environment variable that names the server to use ({@code postgresql://user[:password]@host:port/db}). */
    public static final String ENVIRONMENT_VARIABLE = "LOCKSMITH_TEST_POSTGRES_URL";

    private static final ReentrantLock LOCK = new ReentrantLock();
    private static String url;

    private TestPostgres() {}

    /**
     * The server the tests use, found or started on the first call as above.
     *
     * @return its base URL ({@code postgresql://user@host:port/db}, no parameters)
     * @throws IllegalStateException saying what to set or install, if no server can be had
     */
    public static String baseUrl() {
        String env = System.getenv(ENVIRONMENT_VARIABLE);
        if (env != null && !env.isBlank()) {
            return env.trim();
        }
        LOCK.lock();
        try {
            if (url == null) {
                url = startContainer().orElseGet(TestPostgres::startPrivate);
            }
            return url;
        } finally {
            LOCK.unlock();
        }
    }

    /** The JDBC URL of {@link #baseUrl()}'s database (user and password go separately). */
    public static String jdbcUrl() {
        String base = baseUrl();
        return "jdbc:postgresql://" + base.substring(base.indexOf('@') + 1);
    }

    /** The user of {@link #baseUrl()}. */
    public static String user() {
        String base = baseUrl();
        String userInfo = base.substring(base.indexOf("://") + 3, base.indexOf('@'));
        int colon = userInfo.indexOf(':');
        return colon < 0 ? userInfo : userInfo.substring(0, colon);
    }

    /** The password of {@link #baseUrl()}, empty if it has none. */
    public static String password() {
        String base = baseUrl();
        String userInfo = base.substring(base.indexOf("://") + 3, base.indexOf('@'));
        int colon = userInfo.indexOf(':');
        return colon < 0 ? "" : userInfo.substring(colon + 1);
    }

    private static Optional<String> startContainer() {
        if (!Docker.answers()) {
            return Optional.empty();
        }
        GenericContainer<?> pg = new GenericContainer<>("postgres:17")
                .withEnv("POSTGRES_HOST_AUTH_METHOD", "trust")
                .withEnv("POSTGRES_DB", "test")
                .withExposedPorts(5432)
                // the image's init server stops once; the second "ready" line is the real one
                .waitingFor(Wait.forLogMessage(".*database system is ready to accept connections.*\\n", 2)
                        .withStartupTimeout(Duration.ofMinutes(3)));
        pg.start();
        Runtime.getRuntime().addShutdownHook(new Thread(pg::stop, "locksmith-test-postgres-container-stop"));
        return Optional.of("postgresql://postgres@" + pg.getHost() + ":" + pg.getMappedPort(5432) + "/test");
    }

    private static String startPrivate() {
        PrivatePostgres pg = PrivatePostgres.start(5);
        Runtime.getRuntime().addShutdownHook(new Thread(pg::close, "locksmith-test-postgres-stop"));
        return pg.url();
    }
}
