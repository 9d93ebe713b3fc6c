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
    private static final Target TARGET = Target.twoShards(MySqlStrategy.LEASE, "sharded_lease");

    MySqlShardedLeaseTckTest() {
        super(TARGET);
    }

    @AfterAll
    static void dropTables() {
        TARGET.dropTables();
    }
}
