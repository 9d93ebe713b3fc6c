package org.locksmith.lock.mysql;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;

/**
 * The full TCK against the {@code row} strategy sharded over two databases of the test server ({@code
 * mysql://host/db,db_shard2}): every key lives on one of them by rendezvous hashing.
 *
 * <p>Tagged {@code thorough} (run with {@code -Pthorough}): the default run proves this strategy unsharded and
 * sharding with {@link MySqlShardMapTest} and {@link MySqlShardStallTest}; the shard routing is the same code.
 */
@Tag("thorough")
class MySqlShardedRowTckTest extends MySqlTckSupport {
    private static final Target TARGET = Target.twoShards(MySqlStrategy.ROW, "sharded_row");

    MySqlShardedRowTckTest() {
        super(TARGET);
    }

    @AfterAll
    static void dropTables() {
        TARGET.dropTables();
    }
}
