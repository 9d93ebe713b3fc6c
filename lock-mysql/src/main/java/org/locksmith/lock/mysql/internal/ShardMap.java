package org.locksmith.lock.mysql.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.locksmith.lock.LockBackendException;

/**
 * Which databases make up the shard set, by their data rather than by how a client spells their connections.
 *
 * <p>Every database holds one row in {@code <table>_shard}: its own id (random, written once by the first client
 * that opens it: {@code INSERT IGNORE}, so concurrent first opens agree) and the map, the sorted ids of every shard
 * of the clients that use the table. Keys are routed by these ids, so two clients that reach the same databases
 * through different host names, IP addresses, ports, builder names or orders route every key alike. Before its first
 * grant a client checks that every one of its databases records exactly its own map; the first client records it
 * where none is recorded. A client whose map differs (one shard more or less, another database) fails with
 * {@link LockBackendException} saying what differs, instead of routing some keys to another database than the
 * clients already running and granting them a second time. Changing the shard set is an operator's step: stop every
 * client of the old map, then open one with {@code replaceShardMap}, which overwrites the map in all its databases.
 */
final class ShardMap {
    private ShardMap() {}

    /** What one database says about itself. */
    record Recorded(String shardId, String map) {}

    /** Reads this database's id and recorded map, creating the id the first time (autocommit connection). */
    static Recorded read(Connection c, String table) throws SQLException {
        try (PreparedStatement ps =
                c.prepareStatement("INSERT IGNORE INTO `" + table + "_shard` (id, shard_id) VALUES (1, ?)")) {
            ps.setString(1, UUID.randomUUID().toString().replace("-", ""));
            ps.executeUpdate();
        }
        try (PreparedStatement ps =
                        c.prepareStatement("SELECT shard_id, shard_map FROM `" + table + "_shard` WHERE id = 1");
                ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) {
                throw new SQLException("the row of `" + table + "_shard` is missing right after its creation");
            }
            return new Recorded(rs.getString(1), rs.getString(2));
        }
    }

    /**
     * Makes every shard's recorded map equal this client's, or fails: records it where none is, overwrites a
     * different one only if {@code replace}.
     *
     * @throws LockBackendException if two shards are one database, or a shard records another map
     */
    static void agree(List<Shard> shards, String table, boolean replace) {
        Map<String, Shard> byId = new HashMap<>();
        for (Shard shard : shards) {
            Shard other = byId.putIfAbsent(shard.id(), shard);
            if (other != null) {
                throw new LockBackendException("Shards " + other.name() + " and " + shard.name()
                        + " are the same database (both hold shard id " + shard.id() + " in `" + table
                        + "_shard`): list each database once");
            }
        }
        String map = String.join(",", byId.keySet().stream().sorted().toList());
        List<String> disagreeing = new ArrayList<>();
        for (Shard shard : shards) {
            String recorded = shard.recordedMap();
            if (recorded != null && !recorded.equals(map)) {
                disagreeing.add(
                        shard.name() + " records " + describe(recorded, byId) + difference(map, recorded, byId));
            }
        }
        if (!disagreeing.isEmpty() && !replace) {
            throw new LockBackendException("This client's shards differ from the shard map the clients of table `"
                    + table + "` use, so some keys would live on another database than theirs and be granted twice."
                    + " This client: " + describe(map, byId) + "; " + String.join("; ", disagreeing)
                    + ". Use the same databases as the running clients, or, to change the shard set, stop every"
                    + " client of the old map and open one client with the new map and replaceShardMap=true");
        }
        for (Shard shard : shards) {
            if (map.equals(shard.recordedMap())) {
                continue;
            }
            String now = shard.recordMap(table, replace ? shard.recordedMap() : null, map);
            if (!map.equals(now)) {
                throw new LockBackendException("Another client recorded a different shard map in " + shard.name()
                        + " while this one opened: it records " + describe(now, byId) + ", this client uses "
                        + describe(map, byId) + "; use the same databases as the running clients");
            }
        }
    }

    /** Writes {@code map} if the recorded one is still {@code expected}; returns the map recorded afterwards. */
    static String write(Connection c, String table, String expected, String map) throws SQLException {
        String sql = "UPDATE `" + table + "_shard` SET shard_map = ? WHERE id = 1 AND "
                + (expected == null ? "shard_map IS NULL" : "shard_map = ?");
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, map);
            if (expected != null) {
                ps.setString(2, expected);
            }
            if (ps.executeUpdate() == 1) {
                return map;
            }
        }
        return read(c, table).map();
    }

    /** What this client's map has that the recorded one lacks, and the reverse. */
    private static String difference(String map, String recorded, Map<String, Shard> byId) {
        List<String> mine = List.of(map.split(",", -1));
        List<String> theirs = List.of(recorded.split(",", -1));
        List<String> extra = mine.stream().filter(id -> !theirs.contains(id)).toList();
        List<String> missing = theirs.stream().filter(id -> !mine.contains(id)).toList();
        StringBuilder text = new StringBuilder();
        if (!extra.isEmpty()) {
            text.append(", not ")
                    .append(describe(String.join(",", extra), byId))
                    .append(" that this client has");
        }
        if (!missing.isEmpty()) {
            text.append(extra.isEmpty() ? ", " : " but ")
                    .append(missing.size() == 1 ? "a shard " : "shards ")
                    .append(describe(String.join(",", missing), byId))
                    .append(" that this client lacks");
        }
        return text.toString();
    }

    /** The ids of {@code map}, with the name of this client's shard where it has one. */
    private static String describe(String map, Map<String, Shard> byId) {
        List<String> parts = new ArrayList<>();
        for (String id : map.split(",", -1)) {
            Shard shard = byId.get(id);
            parts.add(shard == null ? id + " (not a shard of this client)" : id + " (" + shard.name() + ")");
        }
        return "[" + String.join(", ", parts) + "]";
    }
}
