package org.locksmith.lock.mysql;

/**
 * lock-mysql's test helper ({@link MySqlTestServer}; package-private there, and taken from its test-jar) opened to
 * lock-cli's tests, so that both find or start the MySQL server the same way.
 */
public final class MySqlTestServers {
    private MySqlTestServers() {}

    /**
     * The base URL ({@code mysql://user@host:port/db}) of the test server: {@code LOCKSMITH_TEST_MYSQL_URL}, else an
     * embedded MariaDB started once for this JVM.
     *
     * @throws IllegalStateException saying what to set, if there is none
     */
    public static String baseUrl() {
        return MySqlTestServer.baseUrl();
    }
}
