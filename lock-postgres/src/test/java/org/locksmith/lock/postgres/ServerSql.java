package org.locksmith.lock.postgres;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.locksmith.lock.testservers.PrivatePostgres;

/** SQL as the superuser of a private test server, for tests that look inside the backend's table and locks. */
final class ServerSql {
    private ServerSql() {}

    /** A key's hash, as the key table stores it. */
    static byte[] sha256(String key) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every JDK", e);
        }
    }

    /** The advisory lock {@code l} (a row of pg_locks) is the lock of key row {@code t}. */
    static String holds(String l, String t) {
        return l + ".locktype = 'advisory' AND " + l + ".objsubid = 1 AND ((" + l + ".classid::bigint << 32) | " + l
                + ".objid::bigint) = " + t + ".id";
    }

    /** The first column of the first row of {@code sql}; 0 while the table it reads does not exist yet. */
    static long count(PrivatePostgres server, String sql, Object... parameters) {
        try (Connection c = DriverManager.getConnection(server.jdbcUrl(), "postgres", "");
                PreparedStatement ps = prepare(c, sql, parameters);
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            if ("42P01".equals(e.getSQLState())) {
                return 0; // the table is not created yet: nothing stored
            }
            throw new IllegalStateException(e);
        }
    }

    static void admin(PrivatePostgres server, String sql, Object... parameters) {
        try (Connection c = DriverManager.getConnection(server.jdbcUrl(), "postgres", "");
                PreparedStatement ps = prepare(c, sql, parameters)) {
            ps.execute();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static PreparedStatement prepare(Connection c, String sql, Object... parameters) throws SQLException {
        PreparedStatement ps = c.prepareStatement(sql);
        for (int i = 0; i < parameters.length; i++) {
            ps.setObject(i + 1, parameters[i]);
        }
        return ps;
    }
}
