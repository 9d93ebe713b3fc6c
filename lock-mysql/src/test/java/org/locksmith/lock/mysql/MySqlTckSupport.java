package org.locksmith.lock.mysql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;
import org.locksmith.lock.mysql.internal.KeyCodec;
import org.locksmith.lock.mysql.internal.MySqlLockBackend;
import org.locksmith.lock.spi.LockUrl;
import org.locksmith.lock.tck.LockFaults;
import org.locksmith.lock.tck.LockTck;
import org.locksmith.lock.tck.TckTimings;

/**
 * The TCK against one strategy on a real server, configured by the {@link Target} a concrete class passes in. Each
 * concrete class uses its own table (random suffix); clients come from {@code mysql://} URLs so that worker JVMs open
 * the very same configuration.
 */
abstract class MySqlTckSupport extends LockTck {

    /**
     * Where and how one TCK class runs.
     *
     * @param baseUrl the base URL (no parameters) of the database(s)
     * @param table the class's own table
     * @param extraParameters more URL parameters ({@code &name=value...}) for the class's clients
     */
    record Target(String baseUrl, MySqlStrategy strategy, String table, String extraParameters) {

        /** {@code strategy} on the test server's database (see {@link MySqlTestServer}), in a table of its own. */
        static Target testServer(MySqlStrategy strategy, String tableName) {
            return new Target(MySqlTestServer.baseUrl(), strategy, MySqlTestServer.uniqueTable(tableName), "");
        }

        /**
         * {@code strategy} sharded over two databases of the test server ({@code mysql://host/db,db_shard2}), in a
         * table of its own: every key lives on one of them by rendezvous hashing.
         */
        static Target twoShards(MySqlStrategy strategy, String tableName) {
            return new Target(MySqlTestServer.twoShardUrl(), strategy, MySqlTestServer.uniqueTable(tableName), "");
        }

        /** This target with more URL parameters. */
        Target withParameters(String parameters) {
            return new Target(baseUrl, strategy, table, extraParameters + parameters);
        }

        /** Drops the table and its companions from every shard (for a class's {@code @AfterAll}). */
        void dropTables() {
            for (String shard : shardUrls(baseUrl)) {
                MySqlTestServer.dropTables(shard, table);
            }
        }
    }

    private final Target target;

    MySqlTckSupport(Target target) {
        this.target = target;
    }

    String url() {
        return url(timings().operationTimeout().toMillis());
    }

    String url(long timeoutMs) {
        TckTimings t = timings();
        return target.baseUrl() + "?strategy=" + target.strategy().urlValue() + "&table=" + target.table()
                + "&leaseMs=" + t.leaseTime().toMillis()
                // the session check decides how fast a killed session is noticed: well inside sessionTimeout
                + "&checkIntervalMs=" + t.sessionTimeout().toMillis() / 10
                // the server ends a silent (paused, dead, cut-off) client's session after this
                + "&sessionTimeoutMs=" + t.sessionTimeout().toMillis()
                + "&timeoutMs=" + timeoutMs
                + "&poolSize=24"
                + target.extraParameters();
    }

    /** The backend under each client this class created, so fault hooks can find the held sessions. */
    private static final Map<LockClient, MySqlLockBackend> BACKENDS = new ConcurrentHashMap<>();

    @Override
    protected LockClient newClient() {
        return open(url());
    }

    /** Like {@link Locks#open(String)}, remembering the backend for the fault hooks. */
    static LockClient open(String url) {
        return client((MySqlLockBackend) new MySqlLockProvider().open(LockUrl.parse(url)));
    }

    /** A client on {@code backend}, remembered for the fault hooks. */
    static LockClient client(org.locksmith.lock.spi.LockBackend backend) {
        LockClient client = Locks.client(backend);
        BACKENDS.put(client, (MySqlLockBackend) backend);
        return client;
    }

    @Override
    protected Optional<String> workerUrl() {
        // A worker JVM's first connection loads and initialises the driver cold; on a loaded 2-core machine that
        // alone can exceed the 2 s operation timeout the TCK's outage contract needs in this JVM.
        return Optional.of(url(15_000));
    }

    static MySqlLockBackend backendOf(LockClient client) {
        MySqlLockBackend backend = BACKENDS.get(client);
        if (backend == null) {
            throw new IllegalArgumentException(client + " was not opened by MySqlTckSupport.open");
        }
        return backend;
    }

    @Override
    protected LockFaults faults() {
        String url = target.baseUrl();
        MySqlStrategy strategy = target.strategy();
        String table = target.table();
        return new LockFaults() {
            @Override
            public Set<Fault> supported() {
                return strategy == MySqlStrategy.LEASE
                        ? EnumSet.of(Fault.DELETE_LOCK_STATE)
                        : EnumSet.of(Fault.KILL_SESSION);
            }

            @Override
            public void killSession(LockClient client) {
                if (strategy == MySqlStrategy.LEASE) {
                    throw new UnsupportedOperationException("KILL_SESSION: the lease strategy holds no session");
                }
                killHeldSessions(client, shardUrls(url).get(0));
            }

            @Override
            public void deleteLockState(String key) {
                for (String shardUrl : shardUrls(url)) {
                    try (Connection c = MySqlTestServer.connect(shardUrl);
                            PreparedStatement ps = c.prepareStatement("DELETE FROM " + table + " WHERE key_hash = ?")) {
                        ps.setBytes(1, KeyCodec.sha256(key));
                        ps.executeUpdate();
                    } catch (SQLException e) {
                        throw new IllegalStateException(e);
                    }
                }
            }
        };
    }

    /**
     * KILL CONNECTION on every session holding one of {@code client}'s locks, from an admin connection to {@code
     * adminUrl} (every shard of these tests lives on one server, so one admin connection reaches all sessions).
     */
    static void killHeldSessions(LockClient client, String adminUrl) {
        MySqlLockBackend backend = backendOf(client);
        List<Long> ids = new ArrayList<>();
        for (Connection held : backend.heldConnections()) {
            try {
                ids.add(MySqlTestServer.sessionId(held));
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }
        for (long id : ids) {
            try (Connection c = MySqlTestServer.connect(adminUrl);
                    Statement s = c.createStatement()) {
                s.execute("KILL CONNECTION " + id);
            } catch (SQLException e) {
                if (e.getErrorCode() != 1094) { // unknown thread id: already gone
                    throw new IllegalStateException(e);
                }
            }
        }
    }

    /** One URL per shard database of {@code baseUrl}. */
    static List<String> shardUrls(String baseUrl) {
        int slash = baseUrl.indexOf('/', baseUrl.indexOf("://") + 3);
        String prefix = baseUrl.substring(0, slash + 1);
        List<String> urls = new ArrayList<>();
        for (String db : baseUrl.substring(slash + 1).split(",")) {
            urls.add(prefix + db);
        }
        return urls;
    }

    /** The server's {@code Questions} status (statements from all clients), once per server the shards live on. */
    @Override
    protected OptionalLong storeOperations() {
        long total = 0;
        Set<String> servers = new HashSet<>();
        for (String shardUrl : shardUrls(target.baseUrl())) {
            if (!servers.add(LockUrl.parse(shardUrl).hosts().toString())) {
                continue;
            }
            try (Connection c = MySqlTestServer.connect(shardUrl);
                    PreparedStatement ps = c.prepareStatement("SHOW GLOBAL STATUS LIKE 'Questions'");
                    ResultSet rs = ps.executeQuery()) {
                rs.next();
                total += rs.getLong(2);
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }
        return OptionalLong.of(total);
    }

    @Override
    protected OptionalInt storeEntries(String key) {
        int n = 0;
        byte[] hash = KeyCodec.sha256(key);
        for (String shardUrl : shardUrls(target.baseUrl())) {
            try (Connection c = MySqlTestServer.connect(shardUrl)) {
                if (target.strategy() == MySqlStrategy.NAMED) {
                    try (PreparedStatement ps = c.prepareStatement("SELECT IS_USED_LOCK(?)")) {
                        ps.setString(
                                1,
                                KeyCodec.namedLockName(LockUrl.parse(shardUrl).path(), target.table(), key));
                        try (ResultSet rs = ps.executeQuery()) {
                            rs.next();
                            rs.getLong(1);
                            n += rs.wasNull() ? 0 : 1;
                        }
                    }
                } else {
                    n += count(c, "SELECT COUNT(*) FROM " + target.table() + " WHERE key_hash = ?", hash);
                }
                n += count(c, "SELECT COUNT(*) FROM " + target.table() + "_fence WHERE key_hash = ?", hash);
            } catch (SQLException e) {
                if (e.getErrorCode() == 1146) { // table not created yet: nothing stored
                    continue;
                }
                throw new IllegalStateException(e);
            }
        }
        return OptionalInt.of(n);
    }

    private static int count(Connection c, String sql, byte[] hash) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setBytes(1, hash);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }
}
