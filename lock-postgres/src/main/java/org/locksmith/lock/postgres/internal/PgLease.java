package org.locksmith.lock.postgres.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.locksmith.lock.jdbc.internal.Interrupts;
import org.locksmith.lock.jdbc.internal.SessionBoundLease;

/**
 * A lock held by one server session: the connection lent to this lease alone holds the key's advisory lock, and
 * its session is marked with the lease's owner. The session check is a statement on that very connection (never
 * a pool borrow, so it cannot starve behind waiters): if the server ended the session, the lock is gone and the
 * check fails.
 */
final class PgLease extends SessionBoundLease {
    private final PostgresLockBackend backend;
    private final long id;
    private final String owner;
    private final int pid;

    PgLease(
            PostgresLockBackend backend,
            Connection connection,
            long id,
            String owner,
            long token,
            long confirmedAtNanos,
            int pid) {
        super(connection, token, confirmedAtNanos);
        this.backend = backend;
        this.id = id;
        this.owner = owner;
        this.pid = pid;
    }

    /** The server process of the holding session; for tests that terminate it. */
    int pid() {
        return pid;
    }

    /**
     * Proves on the held connection that its session is alive and still marked with this lease's owner (a pooler
     * that switched the server session under the connection fails it too).
     *
     * @return false if the session ended or is not this lease's
     */
    @Override
    public boolean renew() {
        return Interrupts.uninterrupted(() -> {
            try (PreparedStatement ps = connection.prepareStatement(PgSql.CHECK)) {
                ps.setString(1, owner);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() && rs.getBoolean(1);
                }
            } catch (SQLException e) {
                return false;
            }
        });
    }

    /** Releases the lock and clears the session's mark; no row means another owner's session, left as it was. */
    @Override
    protected boolean releaseInSession() throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(PgSql.RELEASE)) {
            ps.setLong(1, id);
            ps.setString(2, owner);
            ps.setString(3, owner);
            ps.setString(4, owner);
            ps.execute();
            try (ResultSet rs = ps.getResultSet()) {
                // no row: the session is another owner's (a pooler in transaction mode), left as it was
                return rs.next() && rs.getBoolean(1) && rs.getBoolean(2);
            }
        }
    }

    @Override
    protected void forget() {
        backend.forget(this);
    }

    @Override
    protected void giveBack() {
        backend.sessions().giveBack(connection);
    }

    @Override
    protected void discard() {
        backend.sessions().discard(connection);
    }
}
