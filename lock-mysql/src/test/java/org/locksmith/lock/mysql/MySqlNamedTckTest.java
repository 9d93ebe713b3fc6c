package org.locksmith.lock.mysql;

import org.junit.jupiter.api.AfterAll;

/** The full TCK against the {@code named} strategy on the test server (see {@link MySqlTestServer}). */
class MySqlNamedTckTest extends MySqlTckSupport {
    private static final Target TARGET = Target.testServer(MySqlStrategy.NAMED, "named");

    MySqlNamedTckTest() {
        super(TARGET);
    }

    @AfterAll
    static void dropTables() {
        TARGET.dropTables();
    }
}
