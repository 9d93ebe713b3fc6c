package org.locksmith.lock.postgres.internal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.jdbc.internal.Canceller;
import org.locksmith.lock.jdbc.internal.Connector;
import org.locksmith.lock.jdbc.internal.Interrupts;
import org.locksmith.lock.jdbc.internal.Parallel;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.LockBackend;
import org.locksmith.lock.spi.RenewalReport;

/**
 * PostgreSQL locks: a session-level advisory lock per key, held by a connection lent to the lease, taken and fenced
 * in one round trip by the acquire function (see {@code schema.sql}). The server queues waiters and wakes
 * the next one on release; it frees a session's locks when the session ends, and ends a holder's session after
 * {@code sessionTimeout} of silence ({@code idle_session_timeout}). Key ids come from the key table, so distinct
 * keys never share an advisory lock; they are cached, and the acquire function refuses a stale one.
 */
public final class PostgresLockBackend implements LockBackend {
    /** The longest single lock wait; longer waits are several. */
    private static final long MAX_WAIT_MILLIS = 300_000;
    /** How many candidate ids a key tries before giving up (each taken by another key: practically never). */
    private static final int ID_ATTEMPTS = 16;
    /** Cached key ids; the cache is emptied when it grows past this. */
    private static final int MAX_CACHED_IDS = 10_000;

    private final Set<LockFeature> features = Collections.unmodifiableSet(EnumSet.of(
            LockFeature.REENTRANT,
            LockFeature.FENCING,
            LockFeature.DURABLE_FENCING,
            LockFeature.SESSION_BOUND,
            LockFeature.BLOCKING_WAKEUP,
            LockFeature.LOSS_DETECTION));

    private final PostgresSettings settings;
    private final Sessions sessions;
    private final String acquireSql;
    private final String mapSql;
    private final Map<String, Long> ids = new ConcurrentHashMap<>();
    private final Map<PgLease, Boolean> held = new ConcurrentHashMap<>();
    private final ExecutorService cancelExecutor;
    /** Runs session checks beside the renewal thread, one per held session at most; threads end when idle. */
    private final ExecutorService checkExecutor;

    private volatile long maxWaitMillis = MAX_WAIT_MILLIS;

    /**
     * Opens a backend on {@code sessions}, checking the server and creating the schema first.
     *
     * @throws LockBackendException if the server cannot be reached or is too old
     */
    PostgresLockBackend(PostgresSettings settings, Sessions sessions) {
        this.settings = settings;
        this.sessions = sessions;
        this.acquireSql = PgSql.acquire(settings.table());
        this.mapSql = PgSql.mapKey(settings.table());
        try (Connection c = sessions.service(settings.timeout().toNanos())) {
            c.setNetworkTimeout(Runnable::run, (int) settings.timeout().toMillis());
            PgSql.createSchema(c, settings.table(), settings.createSchema());
        } catch (SQLException e) {
            throw PgSql.failure("could not prepare table " + settings.table() + " on " + sessions, e);
        }
        this.cancelExecutor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "locksmith-postgres-cancel");
            t.setDaemon(true);
            return t;
        });
        this.checkExecutor =
                new ThreadPoolExecutor(0, Integer.MAX_VALUE, 5, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
                    Thread t = new Thread(r, "locksmith-postgres-check");
                    t.setDaemon(true);
                    return t;
                });
    }

    /**
     * A backend on a data source: the application's ({@code owned} false: never closed here) or a pool this
     * backend opened ({@code owned} true).
     */
    public static PostgresLockBackend open(
            PostgresSettings settings, javax.sql.DataSource dataSource, boolean owned, String name) {
        return open(settings, dataSource, dataSource::getConnection, owned, name);
    }

    /**
     * A backend on a data source whose first connection (the schema check) {@code connector} opens instead: a
     * backend that opened its own pool connects directly, so that a failure is the driver's at once, not the
     * pool's after its retries. Every store call of the open, the first connection included, ends within the
     * settings' timeout.
     */
    public static PostgresLockBackend open(
            PostgresSettings settings,
            javax.sql.DataSource dataSource,
            Connector connector,
            boolean owned,
            String name) {
        Sessions sessions = new Sessions(dataSource, connector, owned, name, settings.poolSize());
        try {
            return new PostgresLockBackend(settings, sessions);
        } catch (RuntimeException e) {
            sessions.close();
            throw e;
        }
    }

    @Override
    public String name() {
        return "postgresql";
    }

    @Override
    public Set<LockFeature> features() {
        return features;
    }

    @Override
    public Duration leaseTime() {
        return Duration.ZERO;
    }

    @Override
    public Duration renewInterval() {
        return settings.checkInterval();
    }

    @Override
    public Duration sessionTimeout() {
        return settings.sessionTimeout();
    }

    public PostgresSettings settings() {
        return settings;
    }

    Sessions sessions() {
        return sessions;
    }

    void forget(PgLease lease) {
        held.remove(lease);
    }

    /**
     * Makes every single server-side wait at most {@code longest} (5 minutes otherwise; longer waits are several), so
     * that a test can see a wait's {@code lock_timeout} run out before its deadline.
     */
    public void limitServerWaitsForTests(Duration longest) {
        this.maxWaitMillis = Math.max(1, longest.toMillis());
    }

    /** The server process ids of the sessions holding this backend's locks; for tests that terminate them. */
    public List<Integer> heldSessionPids() {
        List<Integer> pids = new ArrayList<>();
        held.keySet().forEach(l -> pids.add(l.pid()));
        return pids;
    }

    @Override
    public BackendLease acquire(AcquireRequest request) throws InterruptedException {
        long timeoutNanos = settings.timeout().toNanos();
        Connection c = sessions.borrow(request, timeoutNanos);
        if (c == null) {
            return null;
        }
        boolean granted = false;
        boolean maybeHeld = false;
        Canceller canceller = new Canceller(request, cancelExecutor);
        byte[] hash = sha256(request.key());
        try (PreparedStatement ps = c.prepareStatement(acquireSql)) {
            long id = idOf(c, request.key(), hash);
            while (true) {
                if (!request.isTry() && request.isCancelled()) {
                    return null;
                }
                long waitMillis = request.isTry() ? 0 : waitMillis(request.remainingNanos());
                c.setNetworkTimeout(
                        Runnable::run, (int) (waitMillis + settings.timeout().toMillis()));
                ps.setBytes(1, hash);
                ps.setLong(2, id);
                ps.setString(3, request.ownerId());
                ps.setLong(4, waitMillis);
                ps.setLong(5, settings.restartHoldOff().toMillis());
                ps.setLong(6, settings.sessionTimeout().toMillis());
                long token;
                long heldMicros;
                int pid;
                long sentAt;
                canceller.begin(ps);
                maybeHeld = true;
                try {
                    if (!request.isTry() && request.isCancelled()) {
                        return null;
                    }
                    sentAt = System.nanoTime();
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        token = rs.getLong(1);
                        heldMicros = rs.getLong(2);
                        pid = rs.getInt(3);
                    }
                } catch (SQLException e) {
                    if (PgSql.isCancelled(e) || (!request.isTry() && request.isCancelled())) {
                        return null;
                    }
                    if (PgSql.isLockNotAvailable(e)) {
                        // Not proof that nothing was taken: the server may grant the lock and raise the timeout at
                        // its next interrupt check, and the session keeps the lock. Freed before the next wait, which
                        // would otherwise take it a second time (advisory locks count per session); on return, the
                        // clean-up frees it.
                        if (request.isTry() || request.remainingNanos() <= 0) {
                            return null;
                        }
                        if (!freeSession(c, request.ownerId())) {
                            throw e;
                        }
                        maybeHeld = false;
                        continue;
                    }
                    if (PgSql.SHARED_SESSION.equals(e.getSQLState())) {
                        // raised before anything was taken; a clean-up would free the other lease's lock
                        maybeHeld = false;
                        throw PgSql.failure("could not lock key '" + request.key() + "' on " + sessions, e);
                    }
                    throw e;
                } finally {
                    canceller.end();
                }
                if (token > 0) {
                    c.setNetworkTimeout(Runnable::run, (int) settings.timeout().toMillis());
                    // The session was proven alive when the statement ended, which is at least heldMicros (server
                    // time) after it was sent: the session's silence counts from then.
                    long confirmedAt = sentAt + TimeUnit.MICROSECONDS.toNanos(Math.max(0, heldMicros));
                    PgLease lease = new PgLease(this, c, id, request.ownerId(), token, confirmedAt, pid);
                    held.put(lease, Boolean.TRUE);
                    granted = true;
                    return lease;
                }
                maybeHeld = false; // the function returned without the lock
                if (token == 0) {
                    return null; // a try found the key held
                }
                if (token == -1) {
                    ids.remove(request.key()); // the key's row names another id: map it again
                    id = map(c, request.key(), hash);
                    continue;
                }
                // The server started less than the restart hold-off ago: wait for the rest, then ask again.
                if (request.isTry() || !sleep(request, -(token + 10))) {
                    return null;
                }
            }
        } catch (SQLException e) {
            throw PgSql.failure("could not lock key '" + request.key() + "' on " + sessions, e);
        } finally {
            if (!granted) {
                cleanUp(c, maybeHeld, request.ownerId());
            }
        }
    }

    /** Returns a connection whose attempt did not lead to a grant; frees what it may hold first. */
    private void cleanUp(Connection c, boolean maybeHeld, String owner) {
        if (!maybeHeld) {
            sessions.giveBack(c);
            return;
        }
        if (freeSession(c, owner)) {
            sessions.giveBack(c);
        } else {
            sessions.discard(c); // cannot prove the lock free on this session: end the session
        }
    }

    /**
     * Frees every lock the session holds and clears its lock settings; false if that failed, or if the session
     * carries another owner's mark (a pooler in transaction mode gave the statement another client's session: its
     * lock and mark are left alone, and the caller discards this connection).
     */
    private boolean freeSession(Connection c, String owner) {
        return Interrupts.uninterrupted(() -> {
            try (PreparedStatement ps = c.prepareStatement(PgSql.CLEAN_UP)) {
                c.setNetworkTimeout(Runnable::run, (int) settings.timeout().toMillis());
                ps.setString(1, owner);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next();
                }
            } catch (SQLException e) {
                return false;
            }
        });
    }

    /** Sleeps up to {@code millis} or the request's deadline; false if the request was cancelled or ran out. */
    private static boolean sleep(AcquireRequest request, long millis) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        boolean interrupted = false;
        try {
            while (true) {
                long left = Math.min(until - System.nanoTime(), request.remainingNanos());
                if (request.isCancelled() || request.remainingNanos() <= 0) {
                    return false;
                }
                if (left <= 0) {
                    return true;
                }
                try {
                    TimeUnit.NANOSECONDS.sleep(
                            Math.min(left, TimeUnit.MILLISECONDS.toNanos(AcquireRequest.CANCEL_CHECK_MILLIS)));
                } catch (InterruptedException e) {
                    if (request.isInterruptible()) {
                        throw e;
                    }
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private long idOf(Connection c, String key, byte[] hash) throws SQLException {
        Long id = ids.get(key);
        return id != null ? id : map(c, key, hash);
    }

    /**
     * Finds the key's id in the key table, claiming one for it if it has none: the first of its candidate ids (a
     * hash of the table and the key, so that clients agree without asking) that no other key holds.
     */
    private long map(Connection c, String key, byte[] hash) throws SQLException {
        c.setNetworkTimeout(Runnable::run, (int) settings.timeout().toMillis());
        try (PreparedStatement ps = c.prepareStatement(mapSql)) {
            for (int attempt = 0; attempt < ID_ATTEMPTS; attempt++) {
                ps.setBytes(1, hash);
                ps.setLong(2, candidateId(hash, attempt));
                ps.setBytes(3, hash);
                boolean isResult = ps.execute();
                while (!isResult && ps.getUpdateCount() != -1) {
                    isResult = ps.getMoreResults();
                }
                try (ResultSet rs = ps.getResultSet()) {
                    if (rs != null && rs.next()) {
                        long id = rs.getLong(1);
                        if (ids.size() >= MAX_CACHED_IDS) {
                            ids.clear();
                        }
                        ids.put(key, id);
                        return id;
                    }
                }
            }
        }
        throw new LockBackendException("no free advisory lock id for key '" + key + "' in table " + settings.table()
                + " after " + ID_ATTEMPTS + " candidates");
    }

    /** Candidate {@code attempt} of a key's id: 64 bits of SHA-256 over the table name, the attempt and the key. */
    long candidateId(byte[] keyHash, int attempt) {
        MessageDigest d = sha256();
        d.update(settings.table().getBytes(StandardCharsets.UTF_8));
        d.update((byte) 0);
        d.update((byte) attempt);
        d.update(keyHash);
        return ByteBuffer.wrap(d.digest()).getLong();
    }

    static byte[] sha256(String key) {
        return sha256().digest(key.getBytes(StandardCharsets.UTF_8));
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    /**
     * Checks every held session at once, each on its own connection and, all but one, on the backend's daemon
     * threads, reporting each as soon as it answered: a stalled session (its server process stopped, its connection
     * cut off silently) costs its own lease the timeout and delays no other lease's check. Returns once every check
     * has ended, within the timeout.
     */
    @Override
    public void renew(List<BackendLease> leases, RenewalReport report) {
        // a check that threw leaves its lease unreported, so unconfirmed: the next round asks again
        Parallel.forEach(leases, l -> check((PgLease) l, report), checkExecutor, failure -> {});
    }

    private void check(PgLease lease, RenewalReport report) {
        long sentAt = System.nanoTime();
        if (lease.renew()) {
            report.renewed(lease, sentAt);
            return;
        }
        report.lost(lease, "its session on " + sessions + " ended or no longer holds the lock");
        // Only now that the core has marked it lost (report.lost does so before returning) may the server free it.
        lease.giveBackLost();
    }

    @Override
    public void close() {
        cancelExecutor.shutdownNow();
        checkExecutor.shutdownNow();
        sessions.close();
    }

    /**
     * The server-side wait for {@code remainingNanos}, in whole milliseconds rounded up (the exact deadline is kept by
     * cancelling the wait): at least 1, at most {@link #MAX_WAIT_MILLIS}, also for a wait without a deadline.
     */
    private long waitMillis(long remainingNanos) {
        long max = maxWaitMillis;
        if (remainingNanos >= TimeUnit.MILLISECONDS.toNanos(max)) {
            return max;
        }
        return Math.max(1, (remainingNanos + 999_999) / 1_000_000);
    }
}
