package org.locksmith.lock.mysql;

import org.junit.jupiter.api.AfterAll;

/** The full TCK against the {@code named} strategy on the test server (see {@link MySqlTestServer}). */
class MySqlNamedTckTest extends MySqlTckSupport {
    private static final String BASE_URL = MySqlTestServer.baseUrl();
    private static final String TABLE = MySqlTestServer.uniqueTable("named");

    @Override
    String baseUrl() {
        return BASE_URL;
    }

    @Override
    MySqlStrategy strategy() {
        return MySqlStrategy.NAMED;
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
