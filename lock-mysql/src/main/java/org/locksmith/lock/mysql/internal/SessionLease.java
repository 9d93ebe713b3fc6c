package org.locksmith.lock.mysql.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.Consumer;
import org.locksmith.lock.jdbc.internal.SessionBoundLease;

/**
 * A lock held by a server session: a connection lent to this lease alone ({@code row}: an open transaction with
 * the key's row locked; {@code named}: a {@code GET_LOCK}). Renewal is a ping on that very connection (never a
 * pool borrow, so it cannot starve behind waiters): if the server killed the session, the lock is gone and the
 * ping fails.
 */
abstract class SessionLease extends SessionBoundLease {
    /**
     * Called with this lease once, just before its connection is given back (released, found lost, run out): the
     * backend stops keeping the lease.
     */
    private final Consumer<SessionLease> forget;

    final Shard shard;
    /** Send time of the last round trip that proved the session held the lock (System.nanoTime()). */
    private volatile long lastConfirmedNanos;

    SessionLease(Consumer<SessionLease> forget, Shard shard, Connection connection, long token, long confirmedAtNanos) {
        super(connection, token, confirmedAtNanos);
        this.forget = forget;
        this.shard = shard;
        this.lastConfirmedNanos = confirmedAtNanos;
    }

    /**
     * A check sent at {@code sentAtNanos} proved the lock held. False if the connection was given back meanwhile: a
     * check whose reply was read late (the process was paused in between) may find that the sweep has already closed
     * the session, and another client may hold the key; such a lease must be reported lost, never renewed. One
     * monitor with {@link #giveBackIfRunOut}, so that a confirmation and a give-back never cross.
     */
    synchronized boolean confirmed(long sentAtNanos) {
        if (isGivenBack()) {
            return false;
        }
        if (sentAtNanos - lastConfirmedNanos > 0) {
            lastConfirmedNanos = sentAtNanos;
        }
        return true;
    }

    /**
     * Gives the connection back if no check has proved the lock held for {@code sessionNanos}: the core's validity
     * of the lease has ended by then and the server ends a session silent that long, so the lease is lost whether
     * or not anyone said so yet, and the core no longer checks a lease it knows lost.
     *
     * @return whether this call gave the connection back
     */
    synchronized boolean giveBackIfRunOut(long nowNanos, long sessionNanos) {
        return nowNanos - lastConfirmedNanos >= sessionNanos && giveBackLost();
    }

    /**
     * Proves on the held connection itself that its session is alive and still holds the lock (a statement that
     * reaches the server, not {@link Connection#isValid}, which some pools and drivers answer from local state).
     */
    @Override
    public boolean renew() {
        try {
            return stillHeld();
        } catch (SQLException e) {
            return false;
        }
    }

    /** Whether the server still holds the lock for this session; a round trip on {@link #connection}. */
    abstract boolean stillHeld() throws SQLException;

    @Override
    protected void forget() {
        forget.accept(this);
    }

    @Override
    protected void giveBack() {
        shard.giveBack(connection);
    }

    @Override
    protected void discard() {
        shard.discard(connection);
    }

    /** The connection holding the lock; for tests that kill its session. */
    Connection connection() {
        return connection;
    }
}
