package org.locksmith.lock.mysql;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;

/**
 * The full TCK against the {@code row} strategy on the test server (see {@link MySqlTestServer}).
 *
 * <p>The default run runs this class with the client used from virtual threads, on the newest JDK of the machine
 * ({@link MySqlVirtualThreadTckTest}); tagged {@code thorough}, {@code -Pthorough} runs it on platform threads too.
 */
@Tag("thorough")
class MySqlRowTckTest extends MySqlTckSupport {
    private static final String BASE_URL = MySqlTestServer.baseUrl();
    private static final String TABLE = MySqlTestServer.uniqueTable("row");

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

    @AfterAll
    static void dropTable() {
        MySqlTestServer.dropTables(BASE_URL, TABLE);
    }
}
