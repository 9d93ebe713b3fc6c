package org.locksmith.lock.mysql.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.locksmith.lock.jdbc.internal.SqlScript;

/**
 * The DDL of the lock, fence and shard tables, read from {@code org/locksmith/lock/mysql/schema.sql}, the file DBAs
 * run themselves, so the backend and the DBAs' copy cannot drift. Keys are identified by the SHA-256 of their
 * UTF-8 bytes in a {@code BINARY(32)} primary key, so no collation can make two keys equal; the key itself is kept
 * in a {@code utf8mb4_bin} column for operators only.
 */
public final class Schema {
    /** The file DBAs run: its statements, in the order they run, in the format {@link SqlScript} reads. */
    static final String RESOURCE = "/org/locksmith/lock/mysql/schema.sql";
    /** How {@link #RESOURCE} spells the start of the quoted lock table name (the other tables add a suffix). */
    static final String TABLE = "`locksmith_lock";

    private static final List<String> STATEMENTS =
            SqlScript.statements(RESOURCE, Schema.class.getResourceAsStream(RESOURCE));

    private Schema() {}

    /** The statements that create the tables if missing; {@code table} must be validated. */
    public static List<String> ddl(String table) {
        MySqlSettings.validateTable(table);
        List<String> ddl = new ArrayList<>(STATEMENTS.size());
        for (String statement : STATEMENTS) {
            ddl.add(statement.replace(TABLE, "`" + table));
        }
        return List.copyOf(ddl);
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
