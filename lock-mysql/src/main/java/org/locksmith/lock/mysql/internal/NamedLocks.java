package org.locksmith.lock.mysql.internal;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.locksmith.lock.jdbc.internal.Canceller;
import org.locksmith.lock.mysql.MySqlStrategy;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;

/**
 * The {@code named} strategy: {@code GET_LOCK} on a connection lent to the lease; the server queues waiters and
 * frees the lock when the session ends. Names are {@link KeyCodec#namedLockName} of the shard's database, the table and the key (55 characters). The
 * timeout is passed in fractional seconds (MariaDB honours them), and the wait is also cancelled at the deadline
 * for servers that round it.
 */
final class NamedLocks extends SessionLocks {
    private static final long MAX_WAIT_SECONDS = 300;

    private final Fencing fencing;
    private final String table;

    NamedLocks(String table, Fencing fencing) {
        super(MySqlStrategy.NAMED);
        this.table = table;
        this.fencing = fencing;
    }

    String lockName(Shard shard, String key) {
        return KeyCodec.namedLockName(shard.database(), table, key);
    }

    /** Fencing tokens are issued on the holding session: no transaction, no connection beside the holder's. */
    @Override
    boolean holdsTransaction() {
        return false;
    }

    @Override
    BackendLease acquire(StrategyContext context, Shard shard, byte[] keyHash, AcquireRequest request)
            throws InterruptedException {
        Connection c = shard.borrowForLock(
                request,
                false,
                context.cancelExecutor(),
                context.timeoutNanos(),
                context.sessionSeconds(),
                context.restartHoldOffNanos());
        if (c == null) {
            return null;
        }
        String name = lockName(shard, request.key());
        BackendLease granted = null;
        boolean maybeHeld = false;
        Canceller canceller = new Canceller(request, context.cancelExecutor());
        try (PreparedStatement ps = c.prepareStatement("SELECT GET_LOCK(?, ?)")) {
            while (true) {
                if (!request.isTry() && request.isCancelled()) {
                    return null;
                }
                BigDecimal seconds =
                        request.isTry() ? BigDecimal.ZERO : waitSeconds(request.remainingNanos(), shard.isMariaDb());
                c.setNetworkTimeout(Runnable::run, (int)
                        Math.min(Integer.MAX_VALUE, seconds.longValue() * 1000 + 1000 + context.timeoutMillis()));
                ps.setString(1, name);
                ps.setBigDecimal(2, seconds);
                Integer result;
                canceller.begin(ps);
                maybeHeld = true;
                try {
                    if (!request.isTry() && request.isCancelled()) {
                        return null;
                    }
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        int r = rs.getInt(1);
                        result = rs.wasNull() ? null : r;
                    }
                } catch (SQLException e) {
                    if (Sql.isCancelled(e) || request.isCancelled()) {
                        return null;
                    }
                    throw e;
                } finally {
                    canceller.end();
                }
                if (result != null && result == 1) {
                    c.setNetworkTimeout(Runnable::run, context.timeoutMillis());
                    long token;
                    // The session's silence is counted from the end of its last statement, and a wait may have
                    // lasted long: the grant is confirmed by the send time of the token statement on this session.
                    long confirmedAt = System.nanoTime();
                    try {
                        token = fencing.nextOn(c, keyHash);
                    } catch (SQLException e) {
                        if (Sql.isSessionGone(e) || c.isClosed()) {
                            throw new SessionLostException("the session holding key '" + request.key() + "' on " + shard
                                    + " ended before its fencing token was issued: " + e.getMessage());
                        }
                        throw e;
                    }
                    NamedLease lease = new NamedLease(context::forget, shard, c, name, token, confirmedAt);
                    granted = lease;
                    context.remember(lease);
                    return granted;
                }
                maybeHeld = false;
                if (result == null) {
                    // NULL: the wait was killed (our cancel) or failed; MySQL reports KILL QUERY this way.
                    if (request.isTry() || request.isCancelled()) {
                        return null;
                    }
                    throw new SQLException("GET_LOCK returned NULL");
                }
                if (request.isTry() || request.isCancelled()) {
                    return null;
                }
            }
        } catch (SQLException e) {
            throw Sql.failure("could not lock key '" + request.key() + "' on " + shard, e);
        } finally {
            if (granted == null) {
                giveBack(shard, c, name, maybeHeld);
            }
        }
    }

    /** Returns a connection whose GET_LOCK did not lead to a grant; releases the name first if it might be held. */
    private static void giveBack(Shard shard, Connection c, String name, boolean maybeHeld) {
        if (!maybeHeld) {
            shard.giveBack(c);
            return;
        }
        try (PreparedStatement ps = c.prepareStatement("DO RELEASE_LOCK(?)")) {
            ps.setString(1, name);
            ps.execute();
        } catch (SQLException e) {
            shard.discard(c); // cannot prove the name is free on this session: never lend the session again
            return;
        }
        shard.giveBack(c);
    }

    private static BigDecimal waitSeconds(long remainingNanos, boolean fractional) {
        if (remainingNanos >= TimeUnit.SECONDS.toNanos(MAX_WAIT_SECONDS)) {
            return BigDecimal.valueOf(MAX_WAIT_SECONDS);
        }
        if (fractional) {
            return BigDecimal.valueOf(Math.max(0, remainingNanos) / 1000, 6);
        }
        // Whole seconds, rounded up: the exact deadline is enforced by cancelling the wait.
        return BigDecimal.valueOf(Math.max(1, (remainingNanos + 999_999_999L) / 1_000_000_000L));
    }

    /** A named lock: release is {@code RELEASE_LOCK}, which returns 1 only for the session that holds it. */
    static final class NamedLease extends SessionLease {
        private final String name;

        NamedLease(
                Consumer<SessionLease> forget, Shard shard, Connection c, String name, long token, long confirmedAt) {
            super(forget, shard, c, token, confirmedAt);
            this.name = name;
        }

        /** The server's own record of who holds the name: this session, if it is alive and still holds it. */
        @Override
        boolean stillHeld() throws SQLException {
            try (PreparedStatement ps = connection.prepareStatement("SELECT IS_USED_LOCK(?) = CONNECTION_ID()")) {
                ps.setString(1, name);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() && rs.getBoolean(1);
                }
            }
        }

        @Override
        protected boolean releaseInSession() throws SQLException {
            try (PreparedStatement ps = connection.prepareStatement("SELECT RELEASE_LOCK(?)")) {
                ps.setString(1, name);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getInt(1) == 1;
                }
            }
        }
    }
}
