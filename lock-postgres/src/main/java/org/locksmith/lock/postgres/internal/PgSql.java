package org.locksmith.lock.postgres.internal;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.locksmith.lock.LockBackendException;

/** The SQL of the backend (schema, acquire function) and the PostgreSQL errors it reacts to. */
final class PgSql {
    /** lock_not_available: {@code lock_timeout} ran out (also what NOWAIT reports). */
    static final String LOCK_NOT_AVAILABLE = "55P03";
    /** query_canceled: our {@code Statement.cancel()} (or {@code statement_timeout}). */
    static final String QUERY_CANCELED = "57014";
    /** Raised by the acquire function when its session holds a lease already: sessions are shared. */
    static final String SHARED_SESSION = "LS001";
    /** The oldest server with {@code idle_session_timeout}, which frees a silent client's locks. */
    static final int MIN_SERVER_VERSION = 140000;
    /** A fixed advisory lock id (in the two-int space, apart from lock ids) serialising schema creation. */
    private static final String SCHEMA_LOCK = "pg_advisory_xact_lock(1280263755, 1)";

    private PgSql() {}

    /**
     * The key table: one row per key ever locked, holding the key's advisory lock id and its fencing counter. Keys
     * are stored as their SHA-256 (a 1024-character key may exceed a B-tree entry, and text cannot hold NUL).
     */
    static String createTable(String table) {
        return "CREATE TABLE IF NOT EXISTS " + table + " (key_hash bytea PRIMARY KEY, id bigint NOT NULL UNIQUE,"
                + " token bigint NOT NULL DEFAULT 0)";
    }

    /**
     * The acquire function: one round trip grants a lock and issues its fencing token. In order: refuse a session
     * that holds a lease already (a pooler in transaction mode shares server sessions between clients, and session
     * advisory locks are re-entrant per session); grant nothing during the restart hold-off (returns minus the
     * milliseconds left, minus 10); take the advisory lock, at once ({@code p_wait_ms = 0}, returns 0 if held) or
     * waiting up to {@code lock_timeout}; issue the token from the key's row, never below the server clock in
     * microseconds (so tokens keep rising if the table is lost or a replica without the last commits takes over);
     * return -1 if the key's row names another id (the caller's cached id is stale: it maps again). A token equal to
     * the server clock is committed without waiting for the disk ({@code synchronous_commit = off}): a crash may lose
     * it, and the next token after the restart, at least the clock then, is greater still. A token above the clock
     * (the key's counter ran ahead of it: the clock was set back, or a failover went to a server whose clock is
     * behind) is flushed before the client sees the grant ({@code synchronous_commit = on}): no clock would cover it.
     * Last, the session is marked with the lease's owner and given {@code idle_session_timeout} (its value before
     * is kept in {@code locksmith.idle}, for the release to restore), and {@code o_held_us}
     * says how long after the statement began (on the server) it ended: the session was proven alive then, which
     * may be long after the request was sent.
     */
    static String createFunction(String table) {
        String micros = "(extract(epoch FROM clock_timestamp()) * 1000000)::bigint";
        return "CREATE OR REPLACE FUNCTION " + table + "_acquire(p_hash bytea, p_id bigint, p_owner text,"
                + " p_wait_ms bigint, p_holdoff_ms bigint, p_session_ms bigint, OUT o_token bigint, OUT o_held_us bigint)"
                + " LANGUAGE plpgsql AS $f$\n"
                + "DECLARE v_up_ms bigint; v_token bigint; v_now bigint;\n"
                + "BEGIN\n"
                + "  IF current_setting('locksmith.lease', true) <> '' THEN\n"
                + "    RAISE EXCEPTION USING ERRCODE = '" + SHARED_SESSION
                + "', MESSAGE = 'this session holds Locksmith"
                + " lease ' || current_setting('locksmith.lease') || ' already: server sessions are shared between"
                + " clients (a pooler in transaction mode?); use session pooling or connect directly';\n"
                + "  END IF;\n"
                + "  IF p_holdoff_ms > 0 THEN\n"
                + "    v_up_ms := (extract(epoch FROM clock_timestamp() - pg_postmaster_start_time()) * 1000)::bigint;\n"
                + "    IF v_up_ms < p_holdoff_ms THEN o_token := v_up_ms - p_holdoff_ms - 10; RETURN; END IF;\n"
                + "  END IF;\n"
                + "  IF p_wait_ms <= 0 THEN\n"
                + "    IF NOT pg_try_advisory_lock(p_id) THEN o_token := 0; RETURN; END IF;\n"
                + "  ELSE\n"
                + "    PERFORM set_config('lock_timeout', p_wait_ms || 'ms', true);\n"
                + "    PERFORM pg_advisory_lock(p_id);\n"
                + "  END IF;\n"
                + "  v_now := " + micros + ";\n"
                + "  UPDATE " + table + " SET token = greatest(token + 1, v_now)"
                + " WHERE key_hash = p_hash AND id = p_id RETURNING token INTO v_token;\n"
                + "  IF v_token IS NULL THEN\n"
                + "    BEGIN\n"
                + "      INSERT INTO " + table + " (key_hash, id, token) VALUES (p_hash, p_id, v_now)"
                + " RETURNING token INTO v_token;\n"
                + "    EXCEPTION WHEN unique_violation THEN\n"
                + "      PERFORM pg_advisory_unlock(p_id);\n"
                + "      o_token := -1;\n"
                + "      RETURN;\n"
                + "    END;\n"
                + "  END IF;\n"
                + "  PERFORM set_config('synchronous_commit', CASE WHEN v_token > v_now THEN 'on' ELSE 'off' END,"
                + " true);\n"
                + "  PERFORM set_config('locksmith.lease', p_owner, false);\n"
                + "  PERFORM set_config('locksmith.idle', current_setting('idle_session_timeout'), false);\n"
                + "  PERFORM set_config('idle_session_timeout', p_session_ms || 'ms', false);\n"
                + "  o_token := v_token;\n"
                + "  o_held_us := (extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000000)::bigint;\n"
                + "END\n"
                + "$f$";
    }

    /** Maps a key to its lock id: claims {@code id} for it unless the key or the id is taken; then reads the key's. */
    static String mapKey(String table) {
        return "INSERT INTO " + table + " (key_hash, id) VALUES (?, ?) ON CONFLICT DO NOTHING;" + " SELECT id FROM "
                + table + " WHERE key_hash = ?";
    }

    static String acquire(String table) {
        return "SELECT o_token, o_held_us, pg_backend_pid() FROM " + table + "_acquire(?, ?, ?, ?, ?, ?)";
    }

    /** A filter: the session carries no lease mark, or the mark of the owner given as its parameter. */
    private static final String UNMARKED_OR_OWN =
            " WHERE coalesce(current_setting('locksmith.lease', true), '') IN ('', ?)";

    /**
     * Clears the session's lock settings, in a select list: the mark, and {@code idle_session_timeout} back to what it
     * was before the grant (kept by the acquire function in {@code locksmith.idle}; reading {@code pg_settings}
     * instead cost about 0.6 ms a release).
     */
    private static final String CLEAR = "set_config('locksmith.lease', '', false), set_config('idle_session_timeout',"
            + " coalesce(nullif(current_setting('locksmith.idle', true), ''), current_setting('idle_session_timeout')),"
            + " false)";

    /**
     * Releases the lock (parameters: id, owner, owner, owner) on a session that is unmarked or marked with this
     * owner, answering one row (unlocked, marked with this owner), then clears the session's lock settings. On a
     * session marked with another owner (a pooler in transaction mode ran the statements on another client's
     * session) no row, and nothing is touched: that owner's lock and mark stay.
     */
    static final String RELEASE = "SELECT pg_advisory_unlock(?), coalesce(current_setting('locksmith.lease', true),"
            + " '') = ?" + UNMARKED_OR_OWN + "; SELECT " + CLEAR + UNMARKED_OR_OWN;

    /**
     * After a failed attempt (parameter: owner): frees whatever the attempt may have taken and clears the session's
     * lock settings, on a session that is unmarked or marked with this owner (one row); on another owner's session
     * (a pooler in transaction mode) no row, and that owner's lock and mark stay.
     */
    static final String CLEAN_UP = "SELECT pg_advisory_unlock_all(), " + CLEAR + UNMARKED_OR_OWN;

    /** The session check: this session is alive and marked as holding the lease of {@code owner}. */
    static final String CHECK = "SELECT current_setting('locksmith.lease', true) = ?";

    /** Checks the server version and creates the table and the function, one client at a time. */
    static void createSchema(Connection c, String table, boolean create) throws SQLException {
        try (Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT current_setting('server_version_num')::int")) {
                rs.next();
                int version = rs.getInt(1);
                if (version < MIN_SERVER_VERSION) {
                    throw new LockBackendException("PostgreSQL " + version / 10000 + " is too old: Locksmith needs 14"
                            + " or newer (idle_session_timeout, which frees the locks of a silent client)");
                }
            }
            if (!create) {
                return;
            }
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(false);
            try {
                s.execute("SELECT " + SCHEMA_LOCK);
                s.execute(createTable(table));
                s.execute(createFunction(table));
                c.commit();
            } catch (SQLException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(autoCommit);
            }
        }
    }

    static boolean isLockNotAvailable(SQLException e) {
        return LOCK_NOT_AVAILABLE.equals(e.getSQLState());
    }

    static boolean isCancelled(SQLException e) {
        return QUERY_CANCELED.equals(e.getSQLState());
    }

    /** Whether the session itself ended: SQLSTATE class 08 (connection), 57P01-57P05 (terminated, shut down). */
    static boolean isSessionGone(SQLException e) {
        String state = e.getSQLState();
        return state != null && (state.startsWith("08") || state.startsWith("57P"));
    }

    /**
     * A failure; one that shows the server session shared with other clients says so: the refusal of the acquire
     * function, and the JDBC driver's named statements meeting another connection's on the session ({@code 42P05}
     * duplicate_prepared_statement) or missing from it ({@code 26000} invalid_sql_statement_name), which is how a
     * pooler in transaction mode first shows (seen with PgBouncer 1.18 when a second client opens).
     */
    static LockBackendException failure(String what, SQLException e) {
        String state = e.getSQLState();
        if (SHARED_SESSION.equals(state) || "42P05".equals(state) || "26000".equals(state)) {
            return new LockBackendException(
                    what + ": server sessions are shared between clients (a pooler in transaction mode?), and a"
                            + " Locksmith lock belongs to its server session: use session pooling or connect"
                            + " directly (" + e.getMessage() + ")",
                    e);
        }
        return new LockBackendException(what + ": " + reason(e), e);
    }

    /**
     * The message of {@code e} and, where a pool or driver wrapped the real failure ("Connection is not available,
     * request timed out"), the innermost cause's too: the server's own reason (password authentication failed,
     * database does not exist) or the network's (Connection refused).
     */
    static String reason(Throwable e) {
        Throwable root = e;
        for (int i = 0; i < 10 && root.getCause() != null && root.getCause() != root; i++) {
            root = root.getCause();
        }
        String message = String.valueOf(e.getMessage());
        if (root == e || root.getMessage() == null || message.contains(root.getMessage())) {
            return message;
        }
        return message + " (" + root.getClass().getSimpleName() + ": " + root.getMessage() + ")";
    }
}
