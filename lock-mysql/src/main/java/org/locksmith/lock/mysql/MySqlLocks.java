package org.locksmith.lock.mysql;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import javax.sql.DataSource;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;
import org.locksmith.lock.jdbc.internal.CommonOptions;
import org.locksmith.lock.mysql.internal.MySqlLockBackend;
import org.locksmith.lock.mysql.internal.MySqlSettings;
import org.locksmith.lock.mysql.internal.Shard;
import org.locksmith.lock.mysql.internal.Shards;
import org.locksmith.lock.mysql.internal.Strategy;
import org.locksmith.lock.spi.LockBackend;

/**
 * MySQL/MariaDB lock clients built from data sources the application already has:
 *
 * <pre>{@code
 * LockClient locks = MySqlLocks.using(dataSource);                       // row strategy, table locksmith_lock
 * LockClient leased = MySqlLocks.builder().dataSource(dataSource)
 *         .strategy(MySqlStrategy.LEASE).leaseTime(Duration.ofSeconds(10)).build();
 * }</pre>
 *
 * <p>The data sources are not closed by the client. Every lock held or waited for with the {@code row} and
 * {@code named} strategies uses one connection of its data source for its whole duration; the client lends itself
 * a small share of the pool (see {@link Builder#poolSize}).
 */
public final class MySqlLocks {
    private MySqlLocks() {}

    /**
     * A client on {@code dataSource} with default settings ({@code row} strategy, table {@value
     * MySqlSettings#DEFAULT_TABLE}, created if missing). Connects once to detect the server and create the schema.
     *
     * @throws org.locksmith.lock.LockBackendException if the database cannot be reached
     */
    public static LockClient using(DataSource dataSource) {
        return builder().dataSource(dataSource).build();
    }

    /** A builder for the rarer settings and for several data sources (shards). */
    public static Builder builder() {
        return new Builder();
    }

    /** Settings of a MySQL lock client; each setter validates its argument at once. Not thread-safe. */
    public static final class Builder {
        private final Map<String, DataSource> dataSources = new LinkedHashMap<>();
        private MySqlStrategy strategy = MySqlStrategy.ROW;
        /** table, createSchema, checkInterval, sessionTimeout, poolSize (unset: derived), timeout, restartHoldOff */
        private final CommonOptions options = new CommonOptions(
                MySqlSettings.DEFAULT_TABLE, MySqlSettings.DEFAULT_CHECK_INTERVAL, null, MySqlSettings.DEFAULT_TIMEOUT);

        private Duration leaseTime = MySqlSettings.DEFAULT_LEASE;
        private boolean replaceShardMap;

        private Builder() {}

        /** Adds a data source (a shard), named {@code shard<n>} by its position in messages. */
        public Builder dataSource(DataSource dataSource) {
            return dataSource("shard" + dataSources.size(), dataSource);
        }

        /**
         * Adds a data source (a shard) under a name used in messages. Keys map to shards by rendezvous hashing of
         * an id each database holds (in the {@code <table>_shard} table), not of this name or the order: clients
         * that reach the same databases in any way route keys alike.
         */
        public Builder dataSource(String name, DataSource dataSource) {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(dataSource, "dataSource");
            if (dataSources.putIfAbsent(name, dataSource) != null) {
                throw new IllegalArgumentException("a data source named '" + name + "' was added already");
            }
            return this;
        }

        public Builder strategy(MySqlStrategy strategy) {
            this.strategy = Objects.requireNonNull(strategy, "strategy");
            return this;
        }

        /** The lock table (the fence table is its name + {@code _fence}); validated, since it goes into SQL. */
        public Builder table(String table) {
            MySqlSettings.validateTable(Objects.requireNonNull(table, "table"));
            options.table(table);
            return this;
        }

        /** Whether missing tables are created on open (default true); else a DBA runs {@code schema.sql}. */
        public Builder createSchema(boolean createSchema) {
            options.createSchema(createSchema);
            return this;
        }

        /** The lease time of the {@code lease} strategy (default 30 s); renewed every third of it. */
        public Builder leaseTime(Duration leaseTime) {
            this.leaseTime = Objects.requireNonNull(leaseTime, "leaseTime");
            return this;
        }

        /** How often {@code row}/{@code named} ping held sessions to detect a killed one (default 1 s). */
        public Builder checkInterval(Duration checkInterval) {
            options.checkInterval(checkInterval);
            return this;
        }

        /**
         * {@code row}/{@code named}: the server's {@code wait_timeout} on the connections that hold or wait for locks
         * (whole seconds, at least two check intervals; default five check intervals, rounded up to seconds). A
         * client that falls silent this long (process paused or dead, host frozen or cut off) loses its session and
         * its locks, and a holder's own lease turns invalid before that; the setting each connection had is put back
         * when it returns to its pool.
         */
        public Builder sessionTimeout(Duration sessionTimeout) {
            options.sessionTimeout(sessionTimeout);
            return this;
        }

        /**
         * How many connections of each data source may hold or wait for locks at once. Default: a quarter of a
         * HikariCP pool's maximum size (at least 1), else 2, so that waiting locks cannot take the application's
         * connections. With HikariCP, this number plus one service connection for fencing tokens ({@code row}
         * strategy) must leave the application at least one connection, or {@link #build()} rejects it.
         */
        public Builder poolSize(int poolSize) {
            if (poolSize < 1) {
                throw new IllegalArgumentException("poolSize must be at least 1, got " + poolSize);
            }
            options.poolSize(poolSize);
            return this;
        }

        /** Statement and borrow timeout (default 5 s). */
        public Builder timeout(Duration timeout) {
            options.timeout(timeout);
            return this;
        }

        /**
         * Row/named strategies: how long after a server starts it grants no lock (default: the session timeout; zero
         * turns it off). A server restart ends every session and frees their locks at once, while each holder
         * believes it holds until its next check finds its session gone, for up to the session timeout; set it to
         * the longest session timeout of any client of the database.
         */
        public Builder restartHoldOff(Duration restartHoldOff) {
            options.restartHoldOff(restartHoldOff);
            return this;
        }

        /**
         * Whether to overwrite the shard map recorded in the databases with this client's data sources (default
         * false: a client whose data sources differ from the recorded map fails to open). Use it once to change the
         * shard set, with every client of the old set stopped: a client still running with the old set would route
         * some keys to another database and grant them a second time.
         */
        public Builder replaceShardMap(boolean replaceShardMap) {
            this.replaceShardMap = replaceShardMap;
            return this;
        }

        /** The backend, for {@link Locks#client(LockBackend)}; connects to every data source. */
        public LockBackend buildBackend() {
            if (dataSources.isEmpty()) {
                throw new IllegalStateException("add at least one data source with dataSource(...)");
            }
            Strategy locking = Strategy.of(strategy, options.table(), leaseTime);
            List<Shard> shards = new ArrayList<>();
            int size = Integer.MAX_VALUE;
            for (Map.Entry<String, DataSource> e : dataSources.entrySet()) {
                int lockConnections = Shards.lockConnections(e.getKey(), e.getValue(), locking, options.poolSize());
                size = Math.min(size, lockConnections);
                shards.add(Shards.external(e.getKey(), e.getValue(), lockConnections));
            }
            Duration session = options.sessionTimeoutOr(MySqlSettings::defaultSessionTimeout);
            MySqlSettings settings = new MySqlSettings(
                    strategy,
                    options.table(),
                    options.createSchema(),
                    leaseTime,
                    options.checkInterval(),
                    session,
                    Math.min(size, 10_000),
                    options.timeout(),
                    replaceShardMap,
                    options.restartHoldOffOr(session));
            return new MySqlLockBackend(settings, locking, shards);
        }

        /**
         * A client; connects to every data source to detect the server and create the schema if allowed.
         *
         * @throws IllegalArgumentException if a HikariCP data source is too small (see {@link #poolSize})
         * @throws org.locksmith.lock.LockBackendException if a database cannot be reached
         */
        public LockClient build() {
            return Locks.client(buildBackend());
        }
    }
}
