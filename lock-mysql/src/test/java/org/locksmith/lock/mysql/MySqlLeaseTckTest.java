package org.locksmith.lock.mysql;

import org.junit.jupiter.api.AfterAll;

/** The full TCK against the {@code lease} strategy on the test server (see {@link MySqlTestServer}). */
class MySqlLeaseTckTest extends MySqlTckSupport {
    private static final Target TARGET = Target.testServer(MySqlStrategy.LEASE, "lease");

    MySqlLeaseTckTest() {
        super(TARGET);
    }

    @AfterAll
    static void dropTables() {
        TARGET.dropTables();
    }
}
