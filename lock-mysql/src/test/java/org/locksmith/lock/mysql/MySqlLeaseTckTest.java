package org.locksmith.lock.mysql;

import org.junit.jupiter.api.AfterAll;

/** The full TCK against the {@code lease} strategy on the test server (see {@link MySqlTestServer}). */
class MySqlLeaseTckTest extends MySqlTckSupport {
    private static final String BASE_URL = MySqlTestServer.baseUrl();
    private static final String TABLE = MySqlTestServer.uniqueTable("lease");

    @Override
    String baseUrl() {
        return BASE_URL;
    }

    @Override
    MySqlStrategy strategy() {
        return MySqlStrategy.LEASE;
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
