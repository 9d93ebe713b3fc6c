package org.locksmith.lock.mysql.internal;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * Maps a key to one shard by rendezvous (highest random weight) hashing: every shard scores the key, the highest
 * score wins. Adding a shard moves only the keys the new shard now wins (about 1/n of them), unlike
 * {@code hash % n}, which moves almost all. Scores mix the shard's id (held by the database itself, see {@link
 * ShardMap}) with the key's SHA-256, so the mapping depends on which databases are shards, not on their order or on
 * how a client spells their connections.
 */
final class ShardRouter {
    private final List<Shard> shards;
    private final long[] seeds;

    ShardRouter(List<Shard> shards) {
        this.shards = List.copyOf(shards);
        this.seeds = new long[shards.size()];
        for (int i = 0; i < seeds.length; i++) {
            seeds[i] = ByteBuffer.wrap(KeyCodec.sha256(shards.get(i).id())).getLong();
        }
    }

    Shard shardFor(byte[] keyHash) {
        if (seeds.length == 1) {
            return shards.get(0);
        }
        long k = ByteBuffer.wrap(keyHash).getLong();
        int best = 0;
        long bestScore = Long.MIN_VALUE;
        for (int i = 0; i < seeds.length; i++) {
            long score = mix(seeds[i] ^ k);
            if (score > bestScore
                    || (score == bestScore
                            && shards.get(i).id().compareTo(shards.get(best).id()) < 0)) {
                best = i;
                bestScore = score;
            }
        }
        return shards.get(best);
    }

    /** MurmurHash3's 64-bit finaliser: a bijection with good avalanche, so scores are independent per shard. */
    private static long mix(long z) {
        z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
        z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
        return z ^ (z >>> 33);
    }
}
