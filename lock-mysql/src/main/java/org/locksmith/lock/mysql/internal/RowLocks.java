package org.locksmith.lock.mysql.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.jdbc.internal.Canceller;
import org.locksmith.lock.mysql.MySqlStrategy;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;

/**
 * The {@code row} strategy: the holder keeps one transaction open with {@code SELECT ... FOR UPDATE} on its key's
 * row. Waiters wait in InnoDB's lock queue (no polling); the server wakes one when the holder commits. The wait is
 * bounded server-side in whole seconds ({@code WAIT n} on MariaDB, {@code innodb_lock_wait_timeout} on MySQL) as a
 * backstop, and cut exactly at the deadline by {@link Canceller}. Connections run READ COMMITTED so that a locking
 * read of a missing row takes no gap lock (which would block other keys' row creation).
 */
final class RowLocks extends SessionLocks {
    /** Longest single server-side wait; longer waits loop, so a lost cancel never blocks for long. */
    private static final long MAX_WAIT_SECONDS = 300;

    private final Fencing fencing;
    private final String lockNowait;
    private final String lockPlain;
    private final String lockWaitPrefix;
    private final String insert;

    RowLocks(String table, Fencing fencing) {
        super(MySqlStrategy.ROW);
        this.fencing = fencing;
        String select = "SELECT 1 FROM " + table + " WHERE key_hash = ? FOR UPDATE";
        this.lockNowait = select + " NOWAIT";
        this.lockPlain = select;
        this.lockWaitPrefix = select + " WAIT ";
        this.insert = "INSERT IGNORE INTO " + table + " (key_hash, lock_key) VALUES (?, ?)";
    }

    @Override
    boolean holdsTransaction() {
        return true;
    }

    @Override
    BackendLease acquire(StrategyContext context, Shard shard, byte[] keyHash, AcquireRequest request)
            throws InterruptedException {
        Connection c = shard.borrowForLock(
                request,
                true,
                context.cancelExecutor(),
                context.timeoutNanos(),
                context.sessionSeconds(),
                context.restartHoldOffNanos());
        if (c == null) {
            return null;
        }
        BackendLease granted = null;
        Canceller canceller = new Canceller(request, context.cancelExecutor());
        try {
            boolean created = false;
            while (true) {
                if (!request.isTry() && request.isCancelled()) {
                    return null;
                }
                long waitSeconds = request.isTry() ? 0 : waitSeconds(request.remainingNanos());
                Boolean found = lockRow(context, shard, c, keyHash, request, waitSeconds, canceller);
                if (found == null) {
                    if (request.isTry() || request.isCancelled()) {
                        return null;
                    }
                    continue; // a server-side wait chunk ran out before the deadline
                }
                if (found) {
                    long token = fencing.next(shard, keyHash);
                    c.setNetworkTimeout(Runnable::run, context.timeoutMillis());
                    // The token was issued on another connection: prove this session still holds the row, or a
                    // session killed before the token was issued would be granted a token above its successor's.
                    // That check's send time confirms the grant: the session's silence is counted from the end of
                    // its last statement, and the locking read may have waited long.
                    RowLease lease = new RowLease(context::forget, shard, c, keyHash, token, System.nanoTime());
                    if (!stillHeld(lease, c)) {
                        throw new SessionLostException("the session holding key '" + request.key() + "' on " + shard
                                + " ended before its fencing token was issued");
                    }
                    granted = lease;
                    context.remember(lease);
                    return granted;
                }
                if (created) {
                    throw new LockBackendException("The lock row of key '" + request.key() + "' is missing from "
                            + shard + " right after it was created: is another process deleting rows of the lock"
                            + " table, or is it not a plain InnoDB table?");
                }
                // First use of this key: create its row committed (race-free through the primary key), then lock
                // it like any other. INSERT IGNORE may wait only if another client created and locked it meanwhile.
                // A try must not wait even here: on MariaDB a zero lock wait timeout makes the insert NOWAIT.
                String sql = request.isTry() && shard.isMariaDb()
                        ? "SET STATEMENT innodb_lock_wait_timeout = 0 FOR " + insert
                        : insert;
                try (PreparedStatement ps = c.prepareStatement(sql)) {
                    ps.setBytes(1, keyHash);
                    ps.setString(2, request.key());
                    canceller.begin(ps);
                    try {
                        ps.executeUpdate();
                    } finally {
                        canceller.end();
                    }
                    c.commit();
                } catch (SQLException e) {
                    if (Sql.isCancelled(e) || Sql.isLockNotGranted(e) || request.isCancelled()) {
                        return null;
                    }
                    if (e.getErrorCode() == Sql.DEADLOCK) {
                        // The server rolled the transaction back; inserting again is safe, within the deadline.
                        c.rollback();
                        if (request.isTry() || request.remainingNanos() <= 0) {
                            return null;
                        }
                        continue;
                    }
                    throw e;
                }
                created = true;
            }
        } catch (SQLException e) {
            throw Sql.failure("could not lock key '" + request.key() + "' on " + shard, e);
        } finally {
            if (granted == null) {
                rollbackAndGiveBack(shard, c);
            }
        }
    }

    /**
     * One locking read. Returns true if the row is now locked by this connection, false if it does not exist, null
     * if the wait ended without the lock (NOWAIT refused, wait chunk over, cancelled).
     */
    private Boolean lockRow(
            StrategyContext context,
            Shard shard,
            Connection c,
            byte[] keyHash,
            AcquireRequest request,
            long waitSeconds,
            Canceller canceller)
            throws SQLException {
        String sql;
        if (request.isTry()) {
            sql = lockNowait;
        } else if (shard.isMariaDb()) {
            sql = lockWaitPrefix + waitSeconds;
        } else {
            // MySQL has NOWAIT but no WAIT n: bound the wait through the session's lock wait timeout.
            shard.setLockWaitTimeout(c, waitSeconds);
            sql = lockPlain;
        }
        c.setNetworkTimeout(
                Runnable::run, (int) Math.min(Integer.MAX_VALUE, waitSeconds * 1000 + context.timeoutMillis()));
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setBytes(1, keyHash);
            canceller.begin(ps);
            try {
                if (!request.isTry() && request.isCancelled()) {
                    return null;
                }
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next();
                }
            } finally {
                canceller.end();
            }
        } catch (SQLException e) {
            // Any failure of a cancelled wait is the cancel itself, whatever code the driver gives it.
            if (Sql.isLockNotGranted(e) || Sql.isCancelled(e) || request.isCancelled()) {
                return null;
            }
            if (e.getErrorCode() == Sql.DEADLOCK) {
                return null; // rolled back by the server; the caller's loop tries again if time is left
            }
            throw e;
        }
    }

    private static long waitSeconds(long remainingNanos) {
        if (remainingNanos >= TimeUnit.SECONDS.toNanos(MAX_WAIT_SECONDS)) {
            return MAX_WAIT_SECONDS;
        }
        // Round up: the exact deadline is enforced by cancelling; the server-side timeout is only the backstop.
        return Math.max(1, (remainingNanos + 999_999_999L) / 1_000_000_000L);
    }

    private static void rollbackAndGiveBack(Shard shard, Connection c) {
        try {
            shard.restoreSilence(c);
            c.rollback();
        } catch (SQLException e) {
            shard.discard(c);
            return;
        }
        shard.giveBack(c);
    }

    /**
     * Whether the session survived until its token was issued. Only a session that ended counts as not held (the
     * caller tries again, and a store that is down then fails the next borrow); other failures are the store's.
     */
    private static boolean stillHeld(RowLease lease, Connection c) throws SQLException {
        try {
            return lease.stillHeld();
        } catch (SQLException e) {
            if (Sql.isSessionGone(e) || c.isClosed()) {
                return false;
            }
            throw e;
        }
    }

    /** A row lock: release is COMMIT, which wakes the next waiter in InnoDB's queue. */
    final class RowLease extends SessionLease {
        private final byte[] keyHash;

        RowLease(
                Consumer<SessionLease> forget,
                Shard shard,
                Connection c,
                byte[] keyHash,
                long token,
                long confirmedAtNanos) {
            super(forget, shard, c, token, confirmedAtNanos);
            this.keyHash = keyHash;
        }

        /**
         * Locks the row again in the holding transaction: it answers at once, and only if the session is alive, its
         * transaction still open and the row still there (a ping would prove the first only).
         */
        @Override
        boolean stillHeld() throws SQLException {
            try (PreparedStatement ps = connection.prepareStatement(lockNowait)) {
                ps.setBytes(1, keyHash);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next();
                }
            }
        }

        @Override
        protected boolean releaseInSession() throws SQLException {
            // Before COMMIT, which ends the transaction: a statement after it would leave the pool a transaction to
            // roll back (one more round trip).
            shard.restoreSilence(connection);
            connection.commit();
            return true;
        }
    }
}
