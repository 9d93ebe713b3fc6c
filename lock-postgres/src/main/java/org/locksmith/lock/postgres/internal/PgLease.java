package org.locksmith.lock.postgres.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.locksmith.lock.spi.BackendLease;

/**
 * A lock held by one server session: the connection lent to this lease alone holds the key's advisory lock, and
 * its session is marked with the lease's owner. The session check is a statement on that very connection (never
 * a pool borrow, so it cannot starve behind waiters): if the server ended the session, the lock is gone and the
 * check fails.
 */
final class PgLease implements BackendLease {
    private final PostgresLockBackend backend;
    private final Connection connection;
    private final long id;
    private final String owner;
    private final long token;
    private final long confirmedAtNanos;
    private final int pid;
    /** Set by whichever gives the connection back first: release, or a check that found the lock lost. */
    private final AtomicBoolean givenBack = new AtomicBoolean();

    PgLease(
            PostgresLockBackend backend,
            Connection connection,
            long id,
            String owner,
            long token,
            long confirmedAtNanos,
            int pid) {
        this.backend = backend;
        this.connection = connection;
        this.id = id;
        this.owner = owner;
        this.token = token;
        this.confirmedAtNanos = confirmedAtNanos;
        this.pid = pid;
    }

    @Override
    public long fencingToken() {
        return token;
    }

    @Override
    public long confirmedAtNanos() {
        return confirmedAtNanos;
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
        return PostgresLockBackend.uninterrupted(() -> {
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

    /**
     * Closes the session once the core knows the lease lost, so that the server frees whatever it still holds.
     * Never before: a check that failed on a live session (a read timeout after the process was paused) would free
     * the lock in the server while the core still counted the lease valid.
     */
    void giveBackLost() {
        if (givenBack.compareAndSet(false, true)) {
            backend.forget(this);
            backend.sessions().discard(connection);
        }
    }

    @Override
    public boolean release() {
        return PostgresLockBackend.uninterrupted(this::releaseNow);
    }

    private boolean releaseNow() {
        if (!givenBack.compareAndSet(false, true)) {
            return false; // given back already: the lock was found lost
        }
        backend.forget(this);
        boolean released;
        try (PreparedStatement ps = connection.prepareStatement(PgSql.RELEASE)) {
            ps.setLong(1, id);
            ps.setString(2, owner);
            ps.setString(3, owner);
            ps.setString(4, owner);
            ps.execute();
            try (ResultSet rs = ps.getResultSet()) {
                // no row: the session is another owner's (a pooler in transaction mode), left as it was
                released = rs.next() && rs.getBoolean(1) && rs.getBoolean(2);
            }
        } catch (SQLException e) {
            // The session is broken, and with it the lock: the server frees a dead session's locks.
            backend.sessions().discard(connection);
            return false;
        }
        if (released) {
            backend.sessions().giveBack(connection);
        } else {
            backend.sessions().discard(connection);
        }
        return released;
    }
}
