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
    // Connector/J 4 requires TLS by default; the test servers have none
    private static final Target TARGET =
            Target.testServer(MySqlStrategy.ROW, "mariadb_driver").withParameters("&driver=mariadb&sslMode=disable");

    MySqlMariaDbDriverTckTest() {
        super(TARGET);
    }

    @AfterAll
    static void dropTables() {
        TARGET.dropTables();
    }
}
