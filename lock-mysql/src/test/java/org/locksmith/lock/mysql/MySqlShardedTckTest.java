package org.locksmith.lock.mysql;

import java.util.EnumMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The full TCK against each strategy sharded over two databases of the test server ({@code
 * mysql://host/db,db_shard2}): every key lives on one of them by rendezvous hashing. One report per strategy
 * ({@code mysql-row-2shards}, {@code mysql-lease-2shards}, {@code mysql-named-2shards}).
 *
 * <p>Tagged {@code thorough} (run with {@code -Pthorough}): the default run proves each strategy unsharded and
 * sharding with {@link MySqlShardMapTest} and {@link MySqlShardStallTest}; the shard routing is the same code.
 */
@Tag("thorough")
@ParameterizedClass(name = "{0}")
@EnumSource(MySqlStrategy.class)
class MySqlShardedTckTest extends MySqlTckSupport {
    /** One table per strategy for all of its tests. */
    private static final Map<MySqlStrategy, Target> TARGETS = new EnumMap<>(MySqlStrategy.class);

    MySqlShardedTckTest(MySqlStrategy strategy) {
        super(target(strategy));
    }

    private static synchronized Target target(MySqlStrategy strategy) {
        return TARGETS.computeIfAbsent(strategy, s -> Target.twoShards(s, "sharded_" + s.urlValue()));
    }

    @AfterAll
    static synchronized void dropTables() {
        TARGETS.values().forEach(Target::dropTables);
        TARGETS.clear();
    }
}
