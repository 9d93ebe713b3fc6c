package org.locksmith.lock.postgres.internal;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.jdbc.internal.Failures;
import org.locksmith.lock.jdbc.internal.SqlScript;

/** The SQL of the backend (schema from {@code schema.sql}, statements) and the PostgreSQL errors it reacts to. */
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
     * The file DBAs run, and the backend too: the key table and the acquire function (see the file's header for what
     * the function does), in the format {@link SqlScript} reads. Every {@code locksmith_lock} in it is the table name;
     * its error code for a shared session is {@link #SHARED_SESSION}.
     */
    static final String SCHEMA_RESOURCE = "/org/locksmith/lock/postgres/schema.sql";
    /** How {@link #SCHEMA_RESOURCE} spells the table name (the function adds {@code _acquire}). */
    static final String SCHEMA_TABLE = "locksmith_lock";

    private static final List<String> SCHEMA =
            SqlScript.statements(SCHEMA_RESOURCE, PgSql.class.getResourceAsStream(SCHEMA_RESOURCE));

    /**
     * The statements that create the key table and the acquire function {@code table + "_acquire"} (replacing the
     * function if it exists); {@code table} must be validated (it goes into SQL text unquoted).
     */
    static List<String> schema(String table) {
        List<String> statements = new ArrayList<>(SCHEMA.size());
        for (String statement : SCHEMA) {
            statements.add(statement.replace(SCHEMA_TABLE, table));
        }
        return List.copyOf(statements);
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
                for (String statement : schema(table)) {
                    s.execute(statement);
                }
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
        return new LockBackendException(what + ": " + Failures.reason(e), e);
    }
}
