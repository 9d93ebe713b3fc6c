package org.locksmith.lock.mysql.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Rendezvous hashing: even spread, and adding a shard moves only the keys the new shard wins. */
class ShardRouterTest {

    private static Shard shard(String id) {
        Shard shard = new Shard("name-of-" + id, null, true, null, 1, List.of());
        shard.identify(id, null);
        return shard;
    }

    @Test
    void spreadsKeysEvenlyAndMovesFewWhenAShardIsAdded() {
        Shard a = shard("1f0c5e0f3a6b4c0c9d5e7a1b2c3d4e5f");
        Shard b = shard("7a1b2c3d4e5f1f0c5e0f3a6b4c0c9d5e");
        Shard c = shard("c9d5e7a1b2c3d4e5f1f0c5e0f3a6b4c0");
        ShardRouter two = new ShardRouter(List.of(a, b));
        ShardRouter three = new ShardRouter(List.of(c, b, a)); // order does not matter, ids do
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
