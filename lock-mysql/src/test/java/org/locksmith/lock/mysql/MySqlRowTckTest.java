package org.locksmith.lock.mysql;

import org.junit.jupiter.api.AfterAll;

/** The full TCK against the {@code row} strategy on the test server (see {@link MySqlTestServer}). */
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
