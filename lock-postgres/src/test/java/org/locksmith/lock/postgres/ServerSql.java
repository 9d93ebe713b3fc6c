package org.locksmith.lock.postgres;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Deque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import org.locksmith.lock.testservers.PrivatePostgres;

/** SQL as the superuser of a private test server, for tests that look inside the backend's table and locks. */
final class ServerSql {
    private ServerSql() {}

    /** A key's hash, as the key table stores it. */
    static byte[] sha256(String key) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every JDK", e);
        }
    }

    /** The advisory lock {@code l} (a row of pg_locks) is the lock of key row {@code t}. */
    static String holds(String l, String t) {
        return l + ".locktype = 'advisory' AND " + l + ".objsubid = 1 AND ((" + l + ".classid::bigint << 32) | " + l
                + ".objid::bigint) = " + t + ".id";
    }

    /** The first column of the first row of {@code sql}; 0 while the table it reads does not exist yet. */
    static long count(PrivatePostgres server, String sql, Object... parameters) {
        try (Connection c = DriverManager.getConnection(server.jdbcUrl(), "postgres", "");
                PreparedStatement ps = prepare(c, sql, parameters);
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            if ("42P01".equals(e.getSQLState())) {
                return 0; // the table is not created yet: nothing stored
            }
            throw new IllegalStateException(e);
        }
    }

    /**
     * Sessions kept open for {@link #look}, per server: a new session costs the server a process (about 20 ms here,
     * more on a busy machine), and the TCK's store-view hooks look many times a second (C14.4 polls {@code
     * storeEntries} every 2 ms while a waiter queues).
     */
    private static final Map<String, Deque<Connection>> IDLE = new ConcurrentHashMap<>();

    /**
     * As {@link #count}, on a session kept open between calls (one per concurrent caller). For reads of live server
     * state ({@code pg_locks}, {@code pg_stat_activity}, the key table), which no session caches between statements
     * in autocommit mode. Not for {@code pg_stat_database}: a session that stays open publishes its own counts up to
     * seconds late, where a closed one publishes them as it ends. A kept session that a restart ended is dropped and
     * the call runs on a new one.
     */
    static long look(PrivatePostgres server, String sql, Object... parameters) {
        Deque<Connection> idle = IDLE.computeIfAbsent(server.jdbcUrl(), url -> new ConcurrentLinkedDeque<>());
        while (true) {
            Connection kept = idle.pollFirst();
            if (kept == null) {
                break;
            }
            try {
                long n = count(kept, sql, parameters);
                idle.offerFirst(kept);
                return n;
            } catch (SQLException e) {
                closeQuietly(kept);
                if (!sessionGone(e)) {
                    throw new IllegalStateException(e);
                }
                // ended by a restart or a crash: try the next kept session, else a new one
            }
        }
        Connection c;
        try {
            c = DriverManager.getConnection(server.jdbcUrl(), "postgres", "");
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        try {
            long n = count(c, sql, parameters);
            idle.offerFirst(c);
            return n;
        } catch (SQLException e) {
            closeQuietly(c);
            throw new IllegalStateException(e);
        }
    }

    /** Closes the sessions {@link #look} kept open on {@code server} (for a class's {@code @AfterAll}). */
    static void forget(PrivatePostgres server) {
        Deque<Connection> idle = IDLE.remove(server.jdbcUrl());
        if (idle != null) {
            idle.forEach(ServerSql::closeQuietly);
        }
    }

    private static long count(Connection c, String sql, Object... parameters) throws SQLException {
        try (PreparedStatement ps = prepare(c, sql, parameters);
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            if ("42P01".equals(e.getSQLState())) {
                return 0; // the table is not created yet: nothing stored
            }
            throw e;
        }
    }

    /** SQLSTATE class 08 (connection) or 57P01-57P03 (terminated, shut down, cannot connect now). */
    private static boolean sessionGone(SQLException e) {
        String state = e.getSQLState();
        return state == null || state.startsWith("08") || state.startsWith("57P");
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException ignored) {
            // gone already
        }
    }

    static void admin(PrivatePostgres server, String sql, Object... parameters) {
        try (Connection c = DriverManager.getConnection(server.jdbcUrl(), "postgres", "");
                PreparedStatement ps = prepare(c, sql, parameters)) {
            ps.execute();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static PreparedStatement prepare(Connection c, String sql, Object... parameters) throws SQLException {
        PreparedStatement ps = c.prepareStatement(sql);
        for (int i = 0; i < parameters.length; i++) {
            ps.setObject(i + 1, parameters[i]);
        }
        return ps;
    }
}
