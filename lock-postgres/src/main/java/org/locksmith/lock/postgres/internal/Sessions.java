package org.locksmith.lock.postgres.internal;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.jdbc.internal.Connector;
import org.locksmith.lock.jdbc.internal.FirstConnection;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.Permits;

/**
 * Lends connections of a data source to locks, at most {@code permits} at once (each held or waiting lock has one
 * for itself), in autocommit mode, and gives them back with the settings they came with: an application's pool may
 * not reset autocommit or the network timeout, and its next borrower must not find a lock's settings. A connection
 * that may still hold a lock, or whose state is unknown, is discarded (its session closed) rather than given back.
 */
final class Sessions implements AutoCloseable {
    private final DataSource dataSource;
    private final boolean owned;
    private final String name;
    private final Permits permits;
    private final int size;
    private final Map<Connection, Lent> lent = new ConcurrentHashMap<>();
    private final Connector connector;

    private record Lent(boolean autoCommit, int networkTimeout) {}

    /**
     * @param connector opens the service connections (schema creation); a pool this backend opened is bypassed, so
     *     that the first connection's failure is the driver's own (refused, no such database, wrong password), at
     *     once, not the pool's "request timed out" after its retries
     */
    Sessions(DataSource dataSource, Connector connector, boolean owned, String name, int permits) {
        this.dataSource = dataSource;
        this.connector = connector;
        this.owned = owned;
        this.name = name;
        this.permits = new Permits(permits);
        this.size = permits;
    }

    /**
     * A connection for one lock attempt, or null if the request's deadline passed or it was cancelled while every
     * connection was in use. A request that is not interruptible ({@code asLock().lock()}) keeps waiting through
     * interrupts and has its interrupt status set again when this returns.
     */
    Connection borrow(AcquireRequest request, long timeoutNanos) throws InterruptedException {
        // A try does not wait for the holder, but may wait for a connection, up to the operation timeout.
        if (!permits.acquire(request, request.isTry() ? timeoutNanos : request.remainingNanos())) {
            if (request.isTry() && !request.isCancelled()) {
                throw new LockBackendException("no lock connection of " + name + " was free within the"
                        + " timeout (each held or waiting lock takes one of " + size + "): raise poolSize");
            }
            return null;
        }
        try {
            return open(timeoutNanos);
        } catch (RuntimeException | Error e) {
            permits.release();
            throw e;
        }
    }

    private Connection open(long timeoutNanos) {
        // HikariCP refuses to lend to an interrupted thread; the interrupt is the core's business, kept for later.
        boolean interrupted = Thread.interrupted();
        Connection c = null;
        try {
            c = dataSource.getConnection();
            Lent settings = new Lent(c.getAutoCommit(), c.getNetworkTimeout());
            if (!settings.autoCommit()) {
                c.rollback(); // a transaction left open by the application must not become the lock's
                c.setAutoCommit(true);
            }
            c.setNetworkTimeout(Runnable::run, (int) TimeUnit.NANOSECONDS.toMillis(timeoutNanos));
            lent.put(c, settings);
            return c;
        } catch (SQLException e) {
            if (c != null) {
                abort(c);
            }
            throw PgSql.failure("could not connect to " + name, e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Returns a connection that holds no lock, with its settings put back; a broken one is discarded. */
    void giveBack(Connection c) {
        Lent settings = lent.remove(c);
        try {
            if (settings != null && !c.isClosed()) {
                if (c.getNetworkTimeout() != settings.networkTimeout()) {
                    c.setNetworkTimeout(Runnable::run, settings.networkTimeout());
                }
                if (!settings.autoCommit()) {
                    c.setAutoCommit(false);
                }
            }
            c.close();
        } catch (SQLException e) {
            abort(c);
        } finally {
            permits.release();
        }
    }

    /** Closes the session of a connection that may hold a lock or is broken, so that the server frees its locks. */
    void discard(Connection c) {
        lent.remove(c);
        try {
            abort(c);
        } finally {
            permits.release();
        }
    }

    private void abort(Connection c) {
        try {
            if (dataSource instanceof HikariDataSource hikari) {
                hikari.evictConnection(c);
            } else {
                c.abort(Runnable::run);
                c.close();
            }
        } catch (SQLException | RuntimeException e) {
            // broken either way; the server ends the session when its socket closes or idle_session_timeout passes
        }
    }

    /**
     * A short-lived connection for work other than a lock (schema creation), opened within {@code timeoutNanos} on a
     * daemon thread (a connect or login may ignore its own timeouts, which the driver counts in whole seconds); close
     * it after use.
     *
     * @throws LockBackendException naming this address and the reason, if it cannot be had in time
     */
    Connection service(long timeoutNanos) {
        return FirstConnection.open(connector, timeoutNanos, name, "locksmith-postgres-connect", PgSql::failure);
    }

    @Override
    public void close() {
        if (owned && dataSource instanceof HikariDataSource hikari) {
            hikari.close();
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
