package org.locksmith.lock.mysql.internal;

import java.sql.SQLException;
import org.locksmith.lock.LockBackendException;

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
        return new LockBackendException(what + ": " + reason(e), e);
    }

    /**
     * The message of {@code e} and, where a pool or driver wrapped the real failure ("Connection is not available,
     * request timed out", "Communications link failure"), the innermost cause's too: the server's own reason (Access
     * denied, Unknown database) or the network's (Connection refused).
     */
    static String reason(Throwable e) {
        Throwable root = e;
        for (int i = 0; i < 10 && root.getCause() != null && root.getCause() != root; i++) {
            root = root.getCause();
        }
        String message = String.valueOf(e.getMessage());
        if (root == e || root.getMessage() == null || message.contains(root.getMessage())) {
            return message;
        }
        return message + " (" + root.getClass().getSimpleName() + ": " + root.getMessage() + ")";
    }

    /**
     * Runs a store call that does not wait with the thread's interrupt status set aside, and sets it again after.
     * With the status set, HikariCP refuses to lend a connection ("Interrupted during connection acquisition") and a
     * virtual thread's socket closes on its first read, so a release or try by an interrupted thread would fail
     * although nothing waits.
     */
    static <T> T uninterrupted(java.util.function.Supplier<T> call) {
        boolean interrupted = Thread.interrupted();
        try {
            return call.get();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
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
