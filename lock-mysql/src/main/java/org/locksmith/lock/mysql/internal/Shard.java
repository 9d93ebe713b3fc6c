package org.locksmith.lock.mysql.internal;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.spi.AcquireRequest;

/**
 * One database that holds locks: the connections for held locks (gated so that more holds than the pool allows
 * fail at their deadline with a clear message instead of queueing inside the pool), and a separate path for the
 * short autocommit statements (fencing tokens, lease statements), so those never starve behind waiters.
 */
public final class Shard implements AutoCloseable {
    private final String name;
    private final DataSource lockSource;
    private final DataSource shortSource;
    private final boolean external;
    private final int poolSize;
    private final Semaphore lockPermits;
    private final List<HikariDataSource> owned;
    private final Map<Connection, LentSession> lent = new ConcurrentHashMap<>();
    private volatile Boolean mariaDb;
    private volatile String database;

    /**
     * @param name a stable name (host:port/db) used for rendezvous hashing and in messages
     * @param lockSource connections that hold or wait for locks
     * @param external whether the pools belong to the application: lent connections are switched to what a lock
     *     needs and their settings put back on return (the backend's own pools are configured for their use)
     * @param shortSource connections for single autocommit statements (may be {@code lockSource})
     * @param poolSize how many connections {@code lockSource} may lend for locks at once
     * @param owned pools this shard created and closes
     */
    public Shard(
            String name,
            DataSource lockSource,
            boolean external,
            DataSource shortSource,
            int poolSize,
            List<HikariDataSource> owned) {
        this.name = name;
        this.lockSource = lockSource;
        this.external = external;
        this.shortSource = shortSource;
        this.poolSize = poolSize;
        this.lockPermits = new Semaphore(poolSize);
        this.owned = List.copyOf(owned);
    }

    public String name() {
        return name;
    }

    /** The database the shard's connections use (its lock table's schema), known once initialised. */
    String database() {
        String db = database;
        if (db == null) {
            throw new IllegalStateException("shard " + name + " not initialised");
        }
        return db;
    }

    boolean isMariaDb() {
        Boolean m = mariaDb;
        if (m == null) {
            throw new IllegalStateException("shard " + name + " not initialised");
        }
        return m;
    }

    /** Detects the server flavour and creates the schema when allowed; the first I/O of a backend. */
    void initialise(String table, boolean createSchema) {
        try (Connection c = shortSource.getConnection()) {
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT VERSION(), DATABASE()")) {
                rs.next();
                mariaDb = rs.getString(1).toLowerCase(java.util.Locale.ROOT).contains("mariadb");
                String db = rs.getString(2);
                database = db == null ? "" : db;
            }
            if (createSchema) {
                Schema.create(c, table);
            }
        } catch (SQLException e) {
            throw Sql.failure("could not open the MySQL lock store " + name, e);
        }
    }

    /**
     * Borrows a connection for a lock, waiting for a free one until the request's deadline.
     *
     * @return a connection in manual-commit mode (for {@code manualCommit}), or null if the request was cancelled
     * @throws LockBackendException if every connection stayed busy until the deadline, naming the pool size
     */
    Connection borrowForLock(AcquireRequest request, boolean manualCommit) throws InterruptedException {
        if (!lockPermits.tryAcquire()) {
            while (true) {
                if (request.isCancelled() && !request.isTry()) {
                    if (request.remainingNanos() <= 0) {
                        throw poolExhausted();
                    }
                    return null;
                }
                long wait = request.isTry() ? 0 : Math.min(request.remainingNanos(), TimeUnit.MILLISECONDS.toNanos(50));
                if (wait <= 0) {
                    throw poolExhausted();
                }
                if (lockPermits.tryAcquire(wait, TimeUnit.NANOSECONDS)) {
                    break;
                }
            }
        }
        Connection c = null;
        try {
            c = lockSource.getConnection();
            if (external) {
                lent.put(c, LentSession.prepare(c, manualCommit));
            }
            return c;
        } catch (SQLException e) {
            lockPermits.release();
            Sql.closeQuietly(c);
            throw Sql.failure("could not borrow a connection from " + name, e);
        } catch (RuntimeException e) {
            lockPermits.release();
            Sql.closeQuietly(c);
            throw e;
        }
    }

    private LockBackendException poolExhausted() {
        return new LockBackendException("No connection to " + name + " became free before the deadline: all "
                + poolSize + " connections of the lock pool (poolSize=" + poolSize
                + ") hold or wait for locks. Each lock held or waited for uses one connection for its whole"
                + " duration: raise poolSize above the number of locks this client holds and waits for at once");
    }

    /**
     * Returns a lock connection to its pool with the session settings it was lent with (an application's pool may
     * not reset them), and frees its permit.
     */
    void giveBack(Connection c) {
        LentSession session = lent.remove(c);
        try {
            if (session != null && !c.isClosed()) {
                session.restore();
            }
        } catch (SQLException e) {
            // The connection is broken: the pool must not lend it again.
            abort(c);
            lockPermits.release();
            return;
        }
        Sql.closeQuietly(c);
        lockPermits.release();
    }

    /**
     * Sets the session's {@code innodb_lock_wait_timeout} (MySQL, which has no per-statement form); the value the
     * connection was lent with is put back by {@link #giveBack}.
     */
    void setLockWaitTimeout(Connection c, long seconds) throws SQLException {
        LentSession session = lent.get(c);
        if (session != null) {
            session.rememberLockWaitTimeout();
        }
        try (Statement s = c.createStatement()) {
            s.execute("SET SESSION innodb_lock_wait_timeout = " + seconds);
        }
    }

    /** Closes a lock connection that may still hold server-side state, so the pool never lends it again. */
    void discard(Connection c) {
        lent.remove(c);
        abort(c);
        lockPermits.release();
    }

    private void abort(Connection c) {
        try {
            if (lockSource instanceof HikariDataSource hikari) {
                hikari.evictConnection(c);
            } else {
                c.abort(Runnable::run);
            }
        } catch (SQLException | RuntimeException e) {
            Sql.closeQuietly(c);
        }
    }

    /** A connection for short autocommit statements; closing the session restores its settings and returns it. */
    LentSession borrowShort() {
        Connection c = null;
        try {
            c = shortSource.getConnection();
            return LentSession.prepare(c, false);
        } catch (SQLException e) {
            Sql.closeQuietly(c);
            throw Sql.failure("could not borrow a connection from " + name, e);
        }
    }

    int poolSize() {
        return poolSize;
    }

    @Override
    public void close() {
        for (HikariDataSource ds : owned) {
            ds.close();
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
