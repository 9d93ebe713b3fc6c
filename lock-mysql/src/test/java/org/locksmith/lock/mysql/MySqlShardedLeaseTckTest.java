package org.locksmith.lock.mysql;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;

/**
 * The full TCK against the {@code lease} strategy sharded over two databases of the test server ({@code
 * mysql://host/db,db_shard2}): every key lives on one of them by rendezvous hashing.
 *
 * <p>Tagged {@code thorough} (run with {@code -Pthorough}), like the sharded row and named classes: the default run
 * proves each strategy unsharded with the whole TCK, and sharding on two real databases with {@link
 * MySqlShardMapTest} (shard identity, maps that differ), {@link MySqlShardStallTest} (a stalled shard) and {@code
 * ShardRouterTest} (routing); the shard routing is the same code for every strategy.
 */
@Tag("thorough")
class MySqlShardedLeaseTckTest extends MySqlTckSupport {
    private static final String BASE_URL = MySqlTestServer.twoShardUrl();
    private static final String TABLE = MySqlTestServer.uniqueTable("sharded_lease");

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
        for (String shard : shardUrls(BASE_URL)) {
            MySqlTestServer.dropTables(shard, TABLE);
        }
    }
}
