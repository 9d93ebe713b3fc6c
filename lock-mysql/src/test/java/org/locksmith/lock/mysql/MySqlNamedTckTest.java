package org.locksmith.lock.mysql;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;

/**
 * The full TCK against the {@code named} strategy on the test server (see {@link MySqlTestServer}). The default
 * build runs it on virtual threads ({@link MySqlVirtualThreadTckTest}); on platform threads it is {@code thorough}.
 */
@Tag("thorough")
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
