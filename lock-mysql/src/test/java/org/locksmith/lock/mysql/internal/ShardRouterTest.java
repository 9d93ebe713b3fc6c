package org.locksmith.lock.mysql.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Rendezvous hashing: even spread, and adding a shard moves only the keys the new shard wins. */
class ShardRouterTest {

    private static Shard shard(String name) {
        return new Shard(name, null, true, null, 1, List.of());
    }

    @Test
    void spreadsKeysEvenlyAndMovesFewWhenAShardIsAdded() {
        Shard a = shard("h1:3306/db1");
        Shard b = shard("h2:3306/db2");
        Shard c = shard("h3:3306/db3");
        ShardRouter two = new ShardRouter(List.of(a, b));
        ShardRouter three = new ShardRouter(List.of(c, b, a)); // order does not matter, names do
        int n = 30_000;
        int onA = 0;
        int moved = 0;
        for (int i = 0; i < n; i++) {
            byte[] key = KeyCodec.sha256("key-" + i);
            Shard before = two.shardFor(key);
            Shard after = three.shardFor(key);
            onA += before == a ? 1 : 0;
            if (before != after) {
                assertThat(after).as("a key moves only to the new shard").isSameAs(c);
                moved++;
            }
        }
        assertThat(onA).isBetween(n / 2 - n / 20, n / 2 + n / 20);
        assertThat(moved).isBetween(n / 3 - n / 20, n / 3 + n / 20);
    }
}
