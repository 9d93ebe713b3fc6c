package org.locksmith.lock.mysql.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * The DDL of the lock and fence tables (also shipped as {@code org/locksmith/lock/mysql/schema.sql} for DBAs).
 * Keys are identified by the SHA-256 of their UTF-8 bytes in a {@code BINARY(32)} primary key, so no collation can
 * make two keys equal; the key itself is kept in a {@code utf8mb4_bin} column for operators only.
 */
public final class Schema {
    private Schema() {}

    /** The statements that create both tables if missing; {@code table} must be validated. */
    public static List<String> ddl(String table) {
        MySqlSettings.validateTable(table);
        return List.of(
                "CREATE TABLE IF NOT EXISTS `" + table + "` (\n"
                        + "  key_hash   BINARY(32)    NOT NULL COMMENT 'SHA-256 of the UTF-8 key',\n"
                        + "  lock_key   VARCHAR(1024) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL"
                        + " COMMENT 'the key, for operators',\n"
                        + "  owner      VARCHAR(128)  CHARACTER SET ascii COLLATE ascii_bin NULL"
                        + " COMMENT 'lease strategy: owner of the current grant',\n"
                        + "  expires_at DATETIME(6)   NOT NULL DEFAULT '1970-01-01 00:00:01'"
                        + " COMMENT 'lease strategy: expiry, UTC, by the server clock',\n"
                        + "  token      BIGINT        NOT NULL DEFAULT 0"
                        + " COMMENT 'lease strategy: fencing token of the current grant',\n"
                        + "  PRIMARY KEY (key_hash)\n"
                        + ") ENGINE=InnoDB",
                "CREATE TABLE IF NOT EXISTS `" + table + "_fence` (\n"
                        + "  key_hash BINARY(32) NOT NULL COMMENT 'SHA-256 of the UTF-8 key',\n"
                        + "  token    BIGINT     NOT NULL COMMENT 'last fencing token issued for the key',\n"
                        + "  PRIMARY KEY (key_hash)\n"
                        + ") ENGINE=InnoDB",
                ShardMap.ddl(table));
    }

    static void create(Connection c, String table) throws SQLException {
        try (Statement s = c.createStatement()) {
            for (String sql : ddl(table)) {
                s.execute(sql);
            }
        }
        if (!c.getAutoCommit()) {
            c.commit();
        }
    }
}
