package org.locksmith.lock.mysql.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Fencing tokens for the session-bound strategies, from the fence table, issued by an autocommit statement on a
 * connection other than the one holding the lock. That is the point: the lock's transaction may be rolled back
 * (killed client, lost connection) but the token it was given stays committed, so the next holder's token is
 * strictly greater. The token is also never below the server clock in microseconds, so it keeps rising if the
 * fence table is lost or truncated (as long as the server clock does not step back).
 */
final class Fencing {
    /**
     * The server clock in microseconds since the epoch, from UTC: {@code UNIX_TIMESTAMP(NOW(6))} goes through the
     * session's time zone, where a local time in the repeated hour of a daylight-saving fall-back maps to its first
     * occurrence, an hour back.
     */
    static final String NOW_MICROS = "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6))";

    /** How often a token statement chosen as a deadlock victim (error 1213, rolled back) is sent again. */
    private static final int DEADLOCK_RETRIES = 5;

    private final String sql;

    Fencing(String fenceTable) {
        // LAST_INSERT_ID(expr) hands the new value back in the OK packet: one round trip, no SELECT.
        this.sql = "INSERT INTO " + fenceTable + " (key_hash, token) VALUES (?, LAST_INSERT_ID(" + NOW_MICROS + "))"
                + " ON DUPLICATE KEY UPDATE token = LAST_INSERT_ID(GREATEST(token + 1, " + NOW_MICROS + "))";
    }

    /**
     * Issues the next token of a key whose lock the caller holds, on a connection of its own (autocommit).
     */
    long next(Shard shard, byte[] keyHash) {
        try (LentSession session = shard.borrowShort()) {
            return nextOn(session.connection, keyHash);
        } catch (SQLException e) {
            throw Sql.failure("could not issue a fencing token on " + shard, e);
        }
    }

    /**
     * Issues the next token of a key on {@code c}, an autocommit connection: the {@code named} strategy issues it on
     * the session that holds {@code GET_LOCK}, so that a token is issued only while that session is alive and holds
     * the lock (a session killed before it fails the statement). A deadlock (the statement was rolled back, nothing
     * issued) is retried a few times, like the row insert.
     */
    long nextOn(Connection c, byte[] keyHash) throws SQLException {
        for (int attempt = 1; ; attempt++) {
            try (PreparedStatement ps = c.prepareStatement(sql, Statement.RETURN_GENERATED_KEYS)) {
                ps.setBytes(1, keyHash);
                ps.executeUpdate();
                return generatedKey(ps);
            } catch (SQLException e) {
                if (e.getErrorCode() != Sql.DEADLOCK || attempt >= DEADLOCK_RETRIES) {
                    throw e;
                }
            }
        }
    }

    static long generatedKey(Statement ps) throws SQLException {
        try (ResultSet keys = ps.getGeneratedKeys()) {
            if (keys.next()) {
                long token = keys.getLong(1);
                if (token > 0) {
                    return token;
                }
            }
        }
        // A driver that does not report LAST_INSERT_ID(expr) as a generated key: ask for it.
        try (Statement s = ps.getConnection().createStatement();
                ResultSet rs = s.executeQuery("SELECT LAST_INSERT_ID()")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
