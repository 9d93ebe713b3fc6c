package org.locksmith.lock.mysql.internal;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.jdbc.internal.Connector;
import org.locksmith.lock.jdbc.internal.FirstConnection;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.Permits;

/**
 * One database that holds locks: the connections for held locks (gated so that more holds than the pool allows
 * fail at their deadline with a clear message instead of queueing inside the pool), and a separate path for the
 * short autocommit statements (fencing tokens, lease statements), so those never starve behind waiters.
 */
public final class Shard implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Shard.class.getName());
    /** ER_NO_SUCH_TABLE. */
    private static final int NO_SUCH_TABLE = 1146;

    private final String name;
    private final DataSource lockSource;
    private final DataSource shortSource;
    private final boolean external;
    private final int poolSize;
    private final Permits lockPermits;
    private final List<HikariDataSource> owned;
    private final Map<Connection, LentSession> lent = new ConcurrentHashMap<>();
    /** Lock connections whose {@code wait_timeout} was set at borrow; their own value is put back at return. */
    private final Set<Connection> silenceBound = ConcurrentHashMap.newKeySet();

    /**
     * The server's id ({@code CONNECTION_ID()}) of each physical lock connection, read at its first borrow (weakly
     * held: the pool decides their life).
     */
    private final Map<Object, Long> sessionIds = Collections.synchronizedMap(new WeakHashMap<>());
    /** The server's session id of each lent lock connection, by the connection as lent (a pool's proxy). */
    private final Map<Connection, Long> lentSessionIds = new ConcurrentHashMap<>();

    /** Physical lock connections whose server's start time was read (weakly held: the pool decides their life). */
    private final Set<Object> startRead = Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));
    /** Until when ({@link System#nanoTime()}) this shard grants no session lock: its server's start + hold-off. */
    private volatile long grantsFromNanos = System.nanoTime();

    private volatile Boolean mariaDb;
    private volatile String database;
    private volatile String id;
    private volatile String recordedMap;
    /** Runs borrows from an application's pool, bounded by {@link #timeoutNanos}; set at initialise. */
    private volatile Executor borrower;

    private volatile long timeoutNanos;

    /**
     * @param name how the client reaches the database (host:port/db, or the builder's name), for messages; keys are
     *     routed by the id the database holds (see {@link ShardMap})
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
        this.lockPermits = new Permits(poolSize);
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

    /**
     * The id the database holds in its shard table: what keys are routed by, whatever the connection's spelling.
     */
    String id() {
        String i = id;
        if (i == null) {
            throw new IllegalStateException("shard " + name + " not initialised");
        }
        return i;
    }

    /** Sets what the database says about itself (tests of the routing set it without a database). */
    void identify(String shardId, String map) {
        id = shardId;
        recordedMap = map;
    }

    /** The shard map the database recorded when it was initialised, or null if none was. */
    String recordedMap() {
        return recordedMap;
    }

    /**
     * Detects the server flavour, creates the schema when allowed, and reads the database's shard id and map; the
     * first I/O of a backend.
     */
    void initialise(String table, boolean createSchema, Executor borrower, long timeoutNanos) {
        this.borrower = borrower;
        this.timeoutNanos = timeoutNanos;
        try (LentSession session = LentSession.prepare(firstConnection(timeoutNanos), false)) {
            Connection c = session.connection;
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
            ShardMap.Recorded recorded = ShardMap.read(c, table);
            identify(recorded.shardId(), recorded.map());
        } catch (SQLException e) {
            throw Sql.failure(
                    "could not open the MySQL lock store " + name
                            + (e.getErrorCode() == NO_SUCH_TABLE
                                    ? " (with createSchema=false, create the tables of schema.sql first, including"
                                            + " `" + table + "_shard`)"
                                    : ""),
                    e);
        }
    }

    private volatile Connector connector;

    /**
     * Makes {@link #initialise} open its connection with {@code direct} instead of a pool this shard owns, so that a
     * failure is the driver's own (refused, unknown database, access denied), at once, not the pool's "request timed
     * out" after its retries.
     */
    public Shard connectDirectly(Connector direct) {
        this.connector = direct;
        return this;
    }

    /**
     * The connection of {@link #initialise}, opened on a daemon thread within {@code timeoutNanos}: a connect or login
     * may outlast its own timeouts, and a pool retries until its connection timeout.
     *
     * @throws LockBackendException naming this shard and the reason, if it cannot be had in time
     */
    private Connection firstConnection(long timeoutNanos) {
        Connector direct = connector;
        Connector open = direct != null ? direct : external ? this::borrowBounded : shortSource::getConnection;
        return FirstConnection.open(open, timeoutNanos, name, "locksmith-mysql-connect", Sql::failure);
    }

    /**
     * Records {@code map} as the database's shard map if it still records {@code expected}.
     *
     * @return the map recorded afterwards
     */
    String recordMap(String table, String expected, String map) {
        try (LentSession session = borrowShort()) {
            String now = ShardMap.write(session.connection, table, expected, map);
            recordedMap = now;
            return now;
        } catch (SQLException e) {
            throw Sql.failure("could not record the shard map in " + name, e);
        }
    }

    /**
     * Whether a session lock may be granted on {@code c}, after waiting within the request's deadline for the
     * restart hold-off. A server restart ends every session, so every lock held on it frees at once, while each
     * holder believes it holds until its next check finds its session gone (up to the session timeout). Every
     * session opened after the restart is new: the first time a physical connection is used for a lock, the
     * server's {@code Uptime} is read (less a second, so that the start it implies is never earlier than the real
     * one; see {@link #uptimeSeconds}), and the shard grants nothing until the server has been up for {@code
     * holdOffNanos}. One statement per new connection, none on a reused one.
     *
     * @return false if the hold-off outlasts the request (a try, a deadline, a cancellation)
     */
    private boolean pastRestartHoldOff(Connection c, AcquireRequest request, long holdOffNanos)
            throws SQLException, InterruptedException {
        if (holdOffNanos <= 0) {
            return true;
        }
        Object physical = c.isWrapperFor(Connection.class) ? c.unwrap(Connection.class) : c;
        if (!startRead.contains(physical)) {
            long uptimeSeconds = uptimeSeconds(c);
            if (uptimeSeconds < TimeUnit.NANOSECONDS.toSeconds(Long.MAX_VALUE / 4)) {
                long from = System.nanoTime() - TimeUnit.SECONDS.toNanos(uptimeSeconds) + holdOffNanos;
                synchronized (this) {
                    if (from - grantsFromNanos > 0) {
                        grantsFromNanos = from;
                    }
                }
            }
            startRead.add(physical);
        }
        while (true) {
            long wait = grantsFromNanos - System.nanoTime();
            if (wait <= 0) {
                return true;
            }
            long remaining = request.remainingNanos();
            if (request.isTry() || request.isCancelled() || remaining <= 0) {
                return false;
            }
            // A restart is rare and the hold-off one wait: nap in short steps to notice a cancellation.
            TimeUnit.NANOSECONDS.sleep(Math.min(Math.min(wait, remaining), TimeUnit.MILLISECONDS.toNanos(50)));
        }
    }

    /**
     * A lower bound of the server's uptime in whole seconds, on the real clock. The server's {@code Uptime} is the
     * difference of two whole-second clocks (the query's start and the server's), so it reads 1 as soon as the first
     * second boundary after the start passes: one second is taken off. It is counted from the session's clock,
     * which {@code SET timestamp} may have moved (an application's session, or a test's): then it is off by the
     * session clock's offset (and wraps around below zero as an unsigned number), so the offset, {@code SYSDATE(6)}
     * (the real clock) minus {@code NOW(6)} (the session's), rounded down, is added. Two statements, once per new
     * connection. {@link Long#MAX_VALUE} if the server does not say.
     */
    private static long uptimeSeconds(Connection c) throws SQLException {
        long uptime;
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SHOW GLOBAL STATUS LIKE 'Uptime'")) {
            if (!rs.next()) {
                return Long.MAX_VALUE;
            }
            uptime = Long.parseUnsignedLong(rs.getString(2).trim());
        }
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT UNIX_TIMESTAMP(SYSDATE(6)) - UNIX_TIMESTAMP(NOW(6))")) {
            long offset = rs.next() ? (long) Math.floor(rs.getDouble(1)) : 0;
            return Math.max(0, uptime + offset - 1);
        }
    }

    /**
     * Borrows a connection for a lock, waiting for a free one no longer than the request's deadline.
     *
     * <p>Before any wait, the session's {@code wait_timeout} becomes {@code sessionSeconds} (one statement that also
     * keeps the value it had, to put back at {@link #giveBack}): the server then ends the session, and frees its
     * locks, once its client has been silent that long, whether it holds (pinged every check interval while alive)
     * or was granted while its host was frozen. Without it a dead or cut-off host's locks stay held for the server's
     * default of 8 hours, or until TCP keepalive notices (about 2 hours).
     *
     * @param executor runs the borrow from an application's pool, which may block past the deadline
     * @param sessionSeconds the {@code wait_timeout} for the lock's session
     * @param restartHoldOffNanos how long after a server starts it grants no lock ({@link #pastRestartHoldOff})
     * @return a connection in manual-commit mode at READ COMMITTED (for {@code manualCommit}) or autocommit, or null
     *     if the deadline passed (all {@code poolSize} connections in use, or the server started less than the
     *     restart hold-off ago: the core reports a timeout) or the request was cancelled
     * @throws LockBackendException if the data source could not give a connection within the backend's timeout
     */
    Connection borrowForLock(
            AcquireRequest request,
            boolean manualCommit,
            Executor executor,
            long timeoutNanos,
            long sessionSeconds,
            long restartHoldOffNanos)
            throws InterruptedException {
        // A try does not wait for the holder of its key, but may wait for a connection, up to the timeout: an empty
        // result would say the key is held, which it may not be.
        if (!lockPermits.acquire(request, request.isTry() ? timeoutNanos : request.remainingNanos())) {
            if (request.isTry() && !request.isCancelled()) {
                throw new LockBackendException(poolExhausted());
            }
            if (!request.isTry() && request.remainingNanos() <= 0) {
                LOG.log(System.Logger.Level.WARNING, poolExhausted());
            }
            return null;
        }
        Connection c = null;
        try {
            c = external ? borrowWithin(request, executor, timeoutNanos) : lockSource.getConnection();
            if (c == null) {
                lockPermits.release();
                return null;
            }
            if (external) {
                lent.put(c, LentSession.prepare(c, manualCommit));
            }
            // Before the session's wait_timeout is shortened: the hold-off may keep the session idle that long.
            if (!pastRestartHoldOff(c, request, restartHoldOffNanos)) {
                Connection unused = c;
                c = null;
                giveBack(unused);
                return null;
            }
            rememberSessionId(c);
            try (Statement s = c.createStatement()) {
                s.execute("SET @locksmith_wait_timeout = @@SESSION.wait_timeout, SESSION wait_timeout = "
                        + sessionSeconds);
            }
            silenceBound.add(c);
            return c;
        } catch (SQLException e) {
            lockPermits.release();
            if (c != null) {
                lent.remove(c);
                lentSessionIds.remove(c);
                abort(c); // its session settings are unknown: never lend it again
            }
            throw Sql.failure("could not borrow a connection from " + name, e);
        } catch (RuntimeException | InterruptedException e) {
            if (c != null) {
                lent.remove(c);
                lentSessionIds.remove(c);
            }
            lockPermits.release();
            Sql.closeQuietly(c);
            throw e;
        }
    }

    /**
     * Notes the server's id of {@code c}'s session, so that {@link #discard} can end it on the server: one {@code
     * SELECT CONNECTION_ID()} the first time a physical connection is lent, none after.
     */
    private void rememberSessionId(Connection c) throws SQLException {
        Object physical = c.isWrapperFor(Connection.class) ? c.unwrap(Connection.class) : c;
        Long id = sessionIds.get(physical);
        if (id == null) {
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT CONNECTION_ID()")) {
                rs.next();
                id = rs.getLong(1);
            }
            sessionIds.put(physical, id);
        }
        lentSessionIds.put(c, id);
    }

    /**
     * Borrows from an application's pool, whose own wait (HikariCP's connectionTimeout, 30 s by default) knows
     * nothing of the caller's deadline: the borrow runs on {@code executor} and is abandoned at the deadline (null)
     * or after the backend's timeout (failure); a connection that arrives after that goes straight back.
     */
    private Connection borrowWithin(AcquireRequest request, Executor executor, long timeoutNanos)
            throws SQLException, InterruptedException {
        CompletableFuture<Connection> borrowed = borrowAsync(lockSource, executor);
        request.onCancel(() -> borrowed.cancel(false));
        long deadlineWait = request.isTry() ? Long.MAX_VALUE : request.remainingNanos();
        long wait = Math.min(deadlineWait, timeoutNanos);
        try {
            return borrowed.get(Math.max(0, wait), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            if (borrowed.cancel(false)) {
                if (deadlineWait <= timeoutNanos) {
                    return null; // the caller's deadline: a timeout, not a failure
                }
                throw exhausted(timeoutNanos, e);
            }
            return borrowed.join();
        } catch (CancellationException e) {
            return null;
        } catch (InterruptedException e) {
            if (!borrowed.cancel(false)) {
                Sql.closeQuietly(borrowed.getNow(null));
            }
            throw e;
        } catch (ExecutionException e) {
            throw borrowFailure(e);
        }
    }

    /**
     * Borrows from an application's pool for one short statement (fencing token, lease statement, renewal,
     * release), waiting at most {@code timeoutMs} whatever the pool's own connection timeout, and through
     * interrupts (a release on an interrupted thread still completes; the interrupt status is kept).
     */
    private Connection borrowBounded() throws SQLException {
        CompletableFuture<Connection> borrowed = borrowAsync(shortSource, borrower);
        long deadline = System.nanoTime() + timeoutNanos;
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return borrowed.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (TimeoutException e) {
                    if (borrowed.cancel(false)) {
                        throw exhausted(timeoutNanos, e);
                    }
                    return borrowed.join();
                } catch (ExecutionException e) {
                    throw borrowFailure(e);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Runs {@code source.getConnection()} on {@code executor}; a connection nobody waits for any more goes back. */
    private static CompletableFuture<Connection> borrowAsync(DataSource source, Executor executor) {
        CompletableFuture<Connection> borrowed = new CompletableFuture<>();
        executor.execute(() -> {
            try {
                Connection c = source.getConnection();
                if (!borrowed.complete(c)) {
                    Sql.closeQuietly(c); // abandoned: return it to the pool
                }
            } catch (Throwable e) {
                borrowed.completeExceptionally(e);
            }
        });
        return borrowed;
    }

    private static SQLException exhausted(long timeoutNanos, Exception cause) {
        return new SQLException(
                "no connection within " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos)
                        + " ms (timeoutMs): the data source is exhausted or the server unreachable",
                "08001",
                cause);
    }

    private static SQLException borrowFailure(ExecutionException e) {
        if (e.getCause() instanceof SQLException sql) {
            return sql;
        }
        return new SQLException("could not borrow a connection: " + e.getCause(), "08001", e.getCause());
    }

    private String poolExhausted() {
        return "No connection to " + name + " became free in time: all " + poolSize
                + " connections of the lock pool (poolSize=" + poolSize + ") hold or wait for locks. Each lock held or"
                + " waited for uses one connection for its whole duration: raise poolSize above the number of locks"
                + " this client holds and waits for at once";
    }

    /**
     * Returns a lock connection to its pool with the session settings it was lent with (an application's pool may
     * not reset them), and frees its permit.
     */
    void giveBack(Connection c) {
        LentSession session = lent.remove(c);
        Long sessionId = lentSessionIds.remove(c);
        try {
            if (c.isClosed()) {
                // Broken in use (on a virtual thread, an interrupt closes the socket): its statement may still run.
                endOnServer(sessionId);
                sessionId = null;
            }
            restoreSilence(c);
            if (session != null && !c.isClosed()) {
                session.restore();
            }
        } catch (SQLException e) {
            // The connection is broken: the pool must not lend it again.
            silenceBound.remove(c);
            abort(c);
            lockPermits.release();
            endOnServer(sessionId);
            return;
        }
        Sql.closeQuietly(c);
        lockPermits.release();
    }

    /**
     * Puts back the {@code wait_timeout} that {@link #borrowForLock} replaced, if it did and has not been put back;
     * {@link #giveBack} does it too, so callers need it only to order it before the end of a transaction.
     */
    void restoreSilence(Connection c) throws SQLException {
        if (silenceBound.remove(c) && !c.isClosed()) {
            try (Statement s = c.createStatement()) {
                s.execute("SET SESSION wait_timeout = @locksmith_wait_timeout, @locksmith_wait_timeout = NULL");
            }
        }
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

    /**
     * Closes a lock connection that may still hold server-side state, so the pool never lends it again, and ends its
     * session on the server ({@link #endOnServer}).
     */
    void discard(Connection c) {
        lent.remove(c);
        silenceBound.remove(c);
        Long sessionId = lentSessionIds.remove(c);
        abort(c);
        lockPermits.release();
        endOnServer(sessionId);
    }

    /**
     * Ends the server session {@code sessionId} of a lock connection given up on the client ({@code KILL
     * CONNECTION}, over a connection of the short path, on the backend's executor; nothing if null). Closing a
     * connection on the client does not end a statement that waits in the server: a row lock wait or a {@code
     * GET_LOCK} would wait on, until its own timeout or until it is granted a lock nobody wants, which it then holds
     * until the server notices that the client is gone. A wait whose socket an interrupt closed (on a virtual
     * thread) before its {@code KILL QUERY} was sent is such a wait. A session already gone makes the KILL fail
     * (unknown thread), which is ignored, as is a store that cannot be reached: there the waits end at their own
     * bounds.
     */
    private void endOnServer(Long sessionId) {
        if (sessionId == null) {
            return;
        }
        Runnable kill = () -> {
            try (LentSession session = borrowShort();
                    Statement s = session.connection.createStatement()) {
                s.execute("KILL CONNECTION " + sessionId);
            } catch (SQLException | RuntimeException e) {
                // unknown thread (already ended), or the store is unreachable
            }
        };
        Executor executor = borrower;
        if (executor == null) {
            kill.run();
            return;
        }
        try {
            executor.execute(kill);
        } catch (RejectedExecutionException e) {
            kill.run(); // the backend is closing
        }
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

    /**
     * A connection for short autocommit statements; closing the session restores its settings and returns it. An
     * application's pool is waited for at most {@code timeoutMs} (the backend's own pools have that connection
     * timeout).
     *
     * @throws LockBackendException if no connection came within {@code timeoutMs}
     */
    LentSession borrowShort() {
        Connection c = null;
        try {
            c = external ? borrowBounded() : shortSource.getConnection();
            return LentSession.prepare(c, false);
        } catch (SQLException e) {
            Sql.closeQuietly(c);
            throw Sql.failure("could not borrow a connection from " + name, e);
        }
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
