package org.locksmith.lock.mysql;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;

/**
 * The full TCK against the {@code row} strategy through MariaDB Connector/J ({@code driver=mariadb}, {@code
 * jdbc:mariadb:} URLs) instead of mysql-connector-j: cancellation, timeouts, generated keys and error codes as that
 * driver reports them.
 *
 * <p>Tagged {@code thorough} (run with {@code -Pthorough}): the default build runs the whole TCK through this driver
 * on the embedded MariaDB ({@link EmbeddedMariaDbRowTckTest}), with restarts and outages too.
 */
@Tag("thorough")
class MySqlMariaDbDriverTckTest extends MySqlTckSupport {
    private static final String BASE_URL = MySqlTestServer.baseUrl();
    private static final String TABLE = MySqlTestServer.uniqueTable("mariadb_driver");

    @Override
    String baseUrl() {
        return BASE_URL;
    }

    @Override
    MySqlStrategy strategy() {
        return MySqlStrategy.ROW;
    }

    @Override
    String table() {
        return TABLE;
    }

    @Override
    String extraParameters() {
        // Connector/J 4 requires TLS by default; the test servers have none
        return "&driver=mariadb&sslMode=disable";
    }

    @AfterAll
    static void dropTable() {
        MySqlTestServer.dropTables(BASE_URL, TABLE);
    }
}
