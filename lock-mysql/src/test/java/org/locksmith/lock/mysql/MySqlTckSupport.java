package org.locksmith.lock.mysql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.EnumSet;
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
 * The TCK against one strategy on a real server. Each concrete class uses its own table (random suffix), dropped
 * after it; clients come from {@code mysql://} URLs so that worker JVMs open the very same configuration.
 */
abstract class MySqlTckSupport extends LockTck {

    /** The base URL (no parameters) of the database(s) this class runs on. */
    abstract String baseUrl();

    abstract MySqlStrategy strategy();

    /** This class's table. */
    abstract String table();

    /** More URL parameters ({@code &name=value...}) for this class's clients. */
    String extraParameters() {
        return "";
    }

    String url() {
        return url(timings().operationTimeout().toMillis());
    }

    String url(long timeoutMs) {
        TckTimings t = timings();
        return baseUrl() + "?strategy=" + strategy().urlValue() + "&table=" + table()
                + "&leaseMs=" + t.leaseTime().toMillis()
                // the session check decides how fast a killed session is noticed: well inside sessionTimeout
                + "&checkIntervalMs=" + t.sessionTimeout().toMillis() / 10
                // the server ends a silent (paused, dead, cut-off) client's session after this
                + "&sessionTimeoutMs=" + t.sessionTimeout().toMillis()
                + "&timeoutMs=" + timeoutMs
                + "&poolSize=24"
                + extraParameters();
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
        String url = baseUrl();
        MySqlStrategy strategy = strategy();
        String table = table();
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
        java.util.Set<String> servers = new java.util.HashSet<>();
        for (String shardUrl : shardUrls(baseUrl())) {
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
        for (String shardUrl : shardUrls(baseUrl())) {
            try (Connection c = MySqlTestServer.connect(shardUrl)) {
                if (strategy() == MySqlStrategy.NAMED) {
                    try (PreparedStatement ps = c.prepareStatement("SELECT IS_USED_LOCK(?)")) {
                        ps.setString(
                                1,
                                KeyCodec.namedLockName(LockUrl.parse(shardUrl).path(), table(), key));
                        try (ResultSet rs = ps.executeQuery()) {
                            rs.next();
                            rs.getLong(1);
                            n += rs.wasNull() ? 0 : 1;
                        }
                    }
                } else {
                    n += count(c, "SELECT COUNT(*) FROM " + table() + " WHERE key_hash = ?", hash);
                }
                n += count(c, "SELECT COUNT(*) FROM " + table() + "_fence WHERE key_hash = ?", hash);
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
