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
    private static final String BASE_URL = MySqlTestServer.twoShardUrl();
    private static final String TABLE = MySqlTestServer.uniqueTable("sharded_row");

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
        for (String shard : shardUrls(BASE_URL)) {
            MySqlTestServer.dropTables(shard, TABLE);
        }
    }
}
