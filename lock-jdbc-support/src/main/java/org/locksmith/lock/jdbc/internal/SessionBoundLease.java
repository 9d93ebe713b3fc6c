package org.locksmith.lock.jdbc.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A lock held by one server session: a connection lent to this lease alone holds it until it is given back, by
 * {@link #release()} or by {@link #giveBackLost()}, whichever comes first; the other then does nothing.
 *
 * <p>Contract for subclasses: {@link #releaseInSession()} frees the lock on {@link #connection} and says whether
 * the session held it; {@link #forget()} stops the backend keeping the lease; {@link #giveBack()} returns the
 * connection, which holds no lock, to its pool, and {@link #discard()} closes its session so that the server frees
 * whatever it may still hold. Each of these is called at most once per lease.
 */
public abstract class SessionBoundLease extends FencedLease {
    /** The connection lent to this lease; its session holds the lock. */
    protected final Connection connection;
    /** Set by whichever gives the connection back first: release, a check that found the lock lost, a sweep. */
    private final AtomicBoolean givenBack = new AtomicBoolean();

    /**
     * @param connection the connection whose session holds the lock
     * @param token the grant's fencing token
     * @param confirmedAtNanos the {@link System#nanoTime()} from which the grant is known to hold
     */
    protected SessionBoundLease(Connection connection, long token, long confirmedAtNanos) {
        super(token, confirmedAtNanos);
        this.connection = connection;
    }

    /** Whether the connection was given back already (released, or found lost). */
    protected final boolean isGivenBack() {
        return givenBack.get();
    }

    /**
     * Gives the connection back (discarded, so that the server ends whatever the session still holds) once the core
     * knows the lease lost, instead of keeping it until the owner calls release(), which may be much later. Never
     * before: a check that failed on a live session (a read timeout after the process was paused, say) would free the
     * lock in the server while the core still counted the lease valid, and another client could be granted in that
     * instant.
     *
     * @return whether this call gave the connection back
     */
    public boolean giveBackLost() {
        if (!givenBack.compareAndSet(false, true)) {
            return false;
        }
        forget();
        discard();
        return true;
    }

    /**
     * Frees the lock in its session, with the thread's interrupt status set aside ({@link Interrupts}), and gives the
     * connection back: to its pool if the session held the lock, else (and if the session is broken) discarded.
     *
     * @return whether the session held the lock until now; false also if the connection was given back already
     */
    @Override
    public final boolean release() {
        return Interrupts.uninterrupted(this::releaseNow);
    }

    private boolean releaseNow() {
        if (!givenBack.compareAndSet(false, true)) {
            return false; // given back already: the lock was found lost or ran out
        }
        forget();
        boolean released;
        try {
            released = releaseInSession();
        } catch (SQLException e) {
            // The session is broken, and with it the lock: the server frees a dead session's locks.
            discard();
            return false;
        }
        if (released) {
            giveBack();
        } else {
            discard();
        }
        return released;
    }

    /** Frees the lock on {@link #connection}; whether this session held it. */
    protected abstract boolean releaseInSession() throws SQLException;

    /** The backend stops keeping this lease. */
    protected abstract void forget();

    /** Returns {@link #connection}, which holds no lock, to its pool. */
    protected abstract void giveBack();

    /** Closes the session of {@link #connection}, so that the server frees whatever it may still hold. */
    protected abstract void discard();
}
