package org.locksmith.lock.mysql.internal;

import java.sql.SQLException;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.jdbc.internal.Failures;

/** The MySQL/MariaDB error codes the strategies react to, and failure translation. */
final class Sql {
    /** ER_LOCK_WAIT_TIMEOUT: also what MariaDB's NOWAIT and WAIT n report. */
    static final int LOCK_WAIT_TIMEOUT = 1205;
    /** ER_LOCK_DEADLOCK: the transaction was rolled back; retrying is safe. */
    static final int DEADLOCK = 1213;
    /** ER_QUERY_INTERRUPTED: KILL QUERY (our cancellation). */
    static final int QUERY_INTERRUPTED = 1317;
    /** ER_LOCK_NOWAIT (MySQL 8). */
    static final int LOCK_NOWAIT = 3572;

    private Sql() {}

    static boolean isLockNotGranted(SQLException e) {
        int code = e.getErrorCode();
        return code == LOCK_WAIT_TIMEOUT || code == LOCK_NOWAIT;
    }

    /**
     * Whether the session itself ended (killed, connection lost): SQLSTATE class 08, ER_CONNECTION_KILLED (1927,
     * MariaDB), ER_SERVER_SHUTDOWN (1053), CR_SERVER_GONE_ERROR (2006), CR_SERVER_LOST (2013).
     */
    static boolean isSessionGone(SQLException e) {
        String state = e.getSQLState();
        int code = e.getErrorCode();
        return (state != null && state.startsWith("08"))
                || code == 1927
                || code == 1053
                || code == 2006
                || code == 2013;
    }

    static boolean isCancelled(SQLException e) {
        // 70100: the SQL standard's "operation cancelled"; S1008: what mysql-connector-j reports for cancel().
        return e.getErrorCode() == QUERY_INTERRUPTED
                || "70100".equals(e.getSQLState())
                || "S1008".equals(e.getSQLState());
    }

    static LockBackendException failure(String what, SQLException e) {
        return new LockBackendException(what + ": " + Failures.reason(e), e);
    }

    static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception e) {
            // Already failing or closing; the original failure is what matters.
        }
    }
}
