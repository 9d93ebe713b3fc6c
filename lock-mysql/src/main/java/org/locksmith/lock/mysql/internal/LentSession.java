package org.locksmith.lock.mysql.internal;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A connection borrowed from a pool, with the session settings it was lent with, so they can be put back before
 * it returns: an application's pool may not reset autocommit, isolation, network timeout or session variables
 * (HikariCP resets the first three, DBCP and plain data sources may not), and the next borrower of the
 * application must not find a lock's settings on its connection.
 */
final class LentSession implements AutoCloseable {
    final Connection connection;
    private final boolean autoCommit;
    private final int isolation;
    private final int networkTimeout;
    private Long lockWaitTimeout;

    private LentSession(Connection connection, boolean autoCommit, int isolation, int networkTimeout) {
        this.connection = connection;
        this.autoCommit = autoCommit;
        this.isolation = isolation;
        this.networkTimeout = networkTimeout;
    }

    /**
     * Records {@code c}'s settings and switches it to what a lock needs: manual commit at READ COMMITTED for a
     * lock transaction (REPEATABLE READ would take gap locks on missing rows, on which concurrent first inserts of
     * different keys deadlock), autocommit otherwise.
     */
    static LentSession prepare(Connection c, boolean lockTransaction) throws SQLException {
        boolean autoCommit = c.getAutoCommit();
        int isolation = lockTransaction ? c.getTransactionIsolation() : Connection.TRANSACTION_NONE;
        LentSession session = new LentSession(c, autoCommit, isolation, c.getNetworkTimeout());
        if (lockTransaction) {
            if (autoCommit) {
                c.setAutoCommit(false);
            } else {
                c.rollback(); // a transaction left open by the application must not become part of the lock's
            }
            if (isolation != Connection.TRANSACTION_READ_COMMITTED) {
                c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
            }
        } else if (!autoCommit) {
            c.setAutoCommit(true);
        }
        return session;
    }

    /** Remembers the session's {@code innodb_lock_wait_timeout} before the first change, to put it back. */
    void rememberLockWaitTimeout() throws SQLException {
        if (lockWaitTimeout != null) {
            return;
        }
        try (Statement s = connection.createStatement();
                ResultSet rs = s.executeQuery("SELECT @@SESSION.innodb_lock_wait_timeout")) {
            rs.next();
            lockWaitTimeout = rs.getLong(1);
        }
    }

    /** Puts back every setting changed since {@link #prepare}; the caller has ended its transaction. */
    void restore() throws SQLException {
        if (lockWaitTimeout != null) {
            try (Statement s = connection.createStatement()) {
                s.execute("SET SESSION innodb_lock_wait_timeout = " + lockWaitTimeout);
            }
        }
        if (isolation != Connection.TRANSACTION_NONE && isolation != Connection.TRANSACTION_READ_COMMITTED) {
            connection.setTransactionIsolation(isolation);
        }
        if (connection.getAutoCommit() != autoCommit) {
            connection.setAutoCommit(autoCommit);
        }
        if (connection.getNetworkTimeout() != networkTimeout) {
            connection.setNetworkTimeout(Runnable::run, networkTimeout);
        }
    }

    /** Restores the settings and returns the connection to its pool; a connection that cannot be restored is closed. */
    @Override
    public void close() {
        try {
            restore();
        } catch (SQLException e) {
            try {
                connection.abort(Runnable::run);
            } catch (SQLException | RuntimeException ignored) {
                // broken either way
            }
        } finally {
            Sql.closeQuietly(connection);
        }
    }
}
