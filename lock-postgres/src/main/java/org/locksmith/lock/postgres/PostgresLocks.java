package org.locksmith.lock.postgres;

import java.time.Duration;
import java.util.Objects;
import javax.sql.DataSource;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;
import org.locksmith.lock.jdbc.internal.CommonOptions;
import org.locksmith.lock.postgres.internal.PostgresLockBackend;
import org.locksmith.lock.postgres.internal.PostgresSettings;

/**
 * PostgreSQL lock clients built from a data source the application already has:
 *
 * <pre>{@code
 * LockClient locks = PostgresLocks.using(dataSource);             // table locksmith_lock, created if missing
 * LockClient custom = PostgresLocks.builder().dataSource(dataSource)
 *         .table("app_locks").sessionTimeout(Duration.ofSeconds(10)).build();
 * }</pre>
 *
 * <p>The data source is not closed by the client. Every lock held or waited for uses one connection of it for its
 * whole duration, in autocommit mode, and gives it back with the settings it came with ({@link Builder#poolSize}
 * bounds how many at once). The connections must reach the server session by session: through PgBouncer, use
 * session pooling (transaction pooling shares server sessions between clients; the backend detects that and
 * refuses to grant).
 */
public final class PostgresLocks {
    private PostgresLocks() {}

    /**
     * A client on {@code dataSource} with default settings. Connects once to check the server (14 or newer) and
     * create the schema.
     *
     * @throws org.locksmith.lock.LockBackendException if the database cannot be reached or is too old
     */
    public static LockClient using(DataSource dataSource) {
        return builder().dataSource(dataSource).build();
    }

    /** A builder for the rarer settings. */
    public static Builder builder() {
        return new Builder();
    }

    /** Settings of a PostgreSQL lock client; {@link #build()} validates them before any I/O. Not thread-safe. */
    public static final class Builder {
        private DataSource dataSource;
        /** table, createSchema, checkInterval, sessionTimeout, poolSize, timeout, restartHoldOff */
        private final CommonOptions options = PostgresSettings.options();

        private Builder() {}

        /** The data source to lend lock connections from (required). */
        public Builder dataSource(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
            return this;
        }

        /** The key table (default {@value PostgresSettings#DEFAULT_TABLE}); its function is {@code <table>_acquire}. */
        public Builder table(String table) {
            options.table(table);
            return this;
        }

        /** Whether to create the table and function if missing (default true); false needs them created already. */
        public Builder createSchema(boolean createSchema) {
            options.createSchema(createSchema);
            return this;
        }

        /** How often each held lock's session is checked (default 1 s). */
        public Builder checkInterval(Duration checkInterval) {
            options.checkInterval(checkInterval);
            return this;
        }

        /**
         * How long the server keeps the session of a silent lock holder ({@code idle_session_timeout}); a dead or
         * frozen client's locks free after this (default five check intervals, at least 1 s).
         */
        public Builder sessionTimeout(Duration sessionTimeout) {
            options.sessionTimeout(sessionTimeout);
            return this;
        }

        /** How long after a server starts it grants no lock (default: the session timeout; zero turns it off). */
        public Builder restartHoldOff(Duration restartHoldOff) {
            options.restartHoldOff(restartHoldOff);
            return this;
        }

        /** How many connections of the data source locks may use at once (default 10). */
        public Builder poolSize(int poolSize) {
            options.poolSize(poolSize);
            return this;
        }

        /** How long a connection borrow or a statement other than a lock wait may take (default 5 s). */
        public Builder timeout(Duration timeout) {
            options.timeout(timeout);
            return this;
        }

        /**
         * Builds the client.
         *
         * @throws IllegalArgumentException if a setting is invalid (before any I/O)
         * @throws IllegalStateException if no data source was given
         * @throws org.locksmith.lock.LockBackendException if the database cannot be reached or is too old
         */
        public LockClient build() {
            if (dataSource == null) {
                throw new IllegalStateException("no data source: call dataSource(...) first");
            }
            PostgresSettings settings = PostgresSettings.of(options);
            return Locks.client(PostgresLockBackend.open(settings, dataSource, false, "data source " + dataSource));
        }
    }
}
