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
    private static final Target TARGET = Target.testServer(MySqlStrategy.ROW, "row");

    MySqlRowTckTest() {
        super(TARGET);
    }

    @AfterAll
    static void dropTables() {
        TARGET.dropTables();
    }
}
