package org.locksmith.lock.mysql.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * The DDL of the lock, fence and shard tables, read from {@code org/locksmith/lock/mysql/schema.sql}, the file DBAs
 * run themselves, so the backend and the DBAs' copy cannot drift. Keys are identified by the SHA-256 of their
 * UTF-8 bytes in a {@code BINARY(32)} primary key, so no collation can make two keys equal; the key itself is kept
 * in a {@code utf8mb4_bin} column for operators only.
 */
public final class Schema {
    /**
     * The statements, in the order they run: lines starting with {@code --} are comments, and a statement ends with
     * the line that ends with {@code ;} (not part of the statement).
     */
    static final String RESOURCE = "/org/locksmith/lock/mysql/schema.sql";
    /** How {@link #RESOURCE} spells the start of the quoted lock table name (the other tables add a suffix). */
    static final String TABLE = "`locksmith_lock";

    private static final List<String> STATEMENTS = load();

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

    /** The statements of {@link #RESOURCE}, their lines joined by {@code \n}. */
    private static List<String> load() {
        String text;
        try (InputStream in = Schema.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is missing from the class path");
            }
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("could not read " + RESOURCE, e);
        }
        List<String> statements = new ArrayList<>();
        StringBuilder statement = new StringBuilder();
        for (String line : text.replace("\r\n", "\n").split("\n", -1)) {
            if (line.startsWith("--") || (statement.length() == 0 && line.isBlank())) {
                continue;
            }
            if (line.endsWith(";")) {
                statements.add(statement.append(line, 0, line.length() - 1).toString());
                statement.setLength(0);
            } else {
                statement.append(line).append('\n');
            }
        }
        if (statement.length() > 0) {
            throw new IllegalStateException(RESOURCE + " ends inside a statement (no ';' at the end of a line)");
        }
        return List.copyOf(statements);
    }
}
