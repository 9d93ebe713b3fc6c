package org.locksmith.lock.bench;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisMonitor;

/**
 * The commands clients sent a store while an operation ran, as the store itself saw them.
 *
 * <ul>
 *   <li>Redis: {@code MONITOR}, counting the commands between two marker {@code ECHO}s sent around the operation,
 *       less the commands a Lua script ran inside the server ({@code [0 lua]}): a script call is one command, one
 *       round trip, however much it does. ({@code total_commands_processed} would count the script's inner calls
 *       too, and Redis 7.0 has no per-client command counter.)
 *   <li>MySQL: the {@code Questions} status (statements sent by clients).
 *   <li>ZooKeeper: {@code Received} of {@code srvr} (requests received, pings included).
 *   <li>PostgreSQL: not counted, {@link #count} is {@code NaN} (see {@link #NOT_COUNTED_ON_POSTGRES}).
 * </ul>
 *
 * {@link #count} keeps the fewest of several runs, so that a background heartbeat falling inside one window cannot
 * inflate the figure. Counts include every client of the server: run nothing else against it meanwhile.
 */
public abstract class StoreCommands implements AutoCloseable {

    /**
     * Why PostgreSQL's commands are not counted: the report prints it. Statements from other sessions are visible
     * only in the cumulative statistics, which each backend flushes at most once a second and which count
     * transactions and rows, not statements; {@code pg_stat_statements} counts statements exactly, but only when
     * the server loaded it at start ({@code shared_preload_libraries}), which a stock server does not.
     */
    public static final String NOT_COUNTED_ON_POSTGRES = "PostgreSQL has no cheap exact per-statement counter:"
            + " its cumulative statistics (pg_stat_database.xact_commit, ...) count transactions and rows, not"
            + " statements, and each backend flushes them at most once a second, so they lag the operation;"
            + " pg_stat_statements counts statements exactly but needs shared_preload_libraries, which a stock"
            + " server does not set";

    /** An operation whose commands are counted. */
    public interface Op {
        void run() throws Exception;
    }

    /** Commands clients sent the store while {@code op} ran, not counting the measurement's own. */
    protected abstract long during(Op op) throws Exception;

    /**
     * The fewest commands the store received during {@code op} over {@code runs} runs; {@code NaN} on a store
     * that has no exact counter ({@link #counted}), where {@code op} still runs {@code runs} times.
     */
    public double count(int runs, Op op) throws Exception {
        long fewest = Long.MAX_VALUE;
        for (int i = 0; i < runs; i++) {
            fewest = Math.min(fewest, during(op));
        }
        return fewest;
    }

    /** Whether {@code store}'s commands are counted exactly; where not, {@link #count} is {@code NaN}. */
    public static boolean counted(StoreKind store) {
        return store != StoreKind.POSTGRES;
    }

    /** The counter for {@code store}, on connections of its own. */
    public static StoreCommands of(StoreKind store, Stores stores) {
        return switch (store) {
            case POSTGRES -> new NotCounted();
            case REDIS -> new RedisMonitor(stores);
            case MYSQL ->
                new Counter() {
                    private final Connection connection = open(stores);

                    @Override
                    protected long read() {
                        return mysqlStatus(connection, "Questions");
                    }

                    @Override
                    public void close() {
                        try {
                            connection.close();
                        } catch (SQLException ignored) {
                            // closing the counter's own connection cannot change a result
                        }
                    }
                };
            case ZOOKEEPER ->
                new Counter() {
                    @Override
                    protected long read() {
                        for (String line : stores.fourLetterWord("srvr").split("\n")) {
                            if (line.startsWith("Received:")) {
                                return Long.parseLong(
                                        line.substring("Received:".length()).trim());
                            }
                        }
                        throw new IllegalStateException("ZooKeeper srvr gave no 'Received:' line");
                    }
                };
        };
    }

    /** A MySQL/MariaDB global status counter ({@code Questions}, {@code Innodb_data_fsyncs}, ...) read on {@code c}. */
    static long mysqlStatus(Connection c, String name) {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SHOW GLOBAL STATUS LIKE '" + name + "'")) {
            if (!rs.next()) {
                throw new IllegalStateException("the server has no status variable " + name);
            }
            return rs.getLong(2);
        } catch (SQLException e) {
            throw new IllegalStateException("SHOW GLOBAL STATUS LIKE '" + name + "' failed: " + e.getMessage(), e);
        }
    }

    private static Connection open(Stores stores) {
        try {
            return stores.mysqlConnection();
        } catch (SQLException e) {
            throw new IllegalStateException("MySQL counter connection: " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {}

    /** A store without an exact command counter: runs the operation, counts nothing. */
    private static final class NotCounted extends StoreCommands {
        @Override
        public double count(int runs, Op op) throws Exception {
            for (int i = 0; i < runs; i++) {
                op.run();
            }
            return Double.NaN;
        }

        @Override
        protected long during(Op op) throws Exception {
            op.run();
            return 0;
        }
    }

    /** A store-wide counter read before and after, less what reading it costs. */
    private abstract static class Counter extends StoreCommands {
        private long overhead = -1;

        protected abstract long read();

        @Override
        protected long during(Op op) throws Exception {
            if (overhead < 0) {
                long fewest = Long.MAX_VALUE;
                for (int i = 0; i < 5; i++) {
                    long before = read();
                    fewest = Math.min(fewest, read() - before);
                }
                overhead = fewest;
            }
            long before = read();
            op.run();
            return Math.max(0, read() - before - overhead);
        }
    }

    /**
     * Redis: counts client commands in the {@code MONITOR} stream between two markers. The reader thread counts as
     * lines arrive and keeps none, so that the stream costs the measured process no memory (S6 weighs its heap).
     */
    private static final class RedisMonitor extends StoreCommands {
        private static final Pattern FROM_SCRIPT = Pattern.compile("^\\S+ \\[\\d+ lua\\] ");
        private static final String READY = "lsbench-monitor-ready";
        private final Jedis monitor;
        private final Jedis markers;
        private final LinkedBlockingQueue<Long> counts = new LinkedBlockingQueue<>();
        private final Thread reader;
        private volatile String start = READY;
        private volatile String end = READY;
        private int next;

        RedisMonitor(Stores stores) {
            monitor = stores.redis(0); // MONITOR may stay quiet for longer than any read timeout
            markers = stores.redis();
            reader = new Thread(
                    () -> {
                        try {
                            monitor.monitor(new JedisMonitor() {
                                private long count = -1;

                                @Override
                                public void onCommand(String line) {
                                    if (line.contains('"' + end + '"')) {
                                        counts.add(Math.max(0, count));
                                        count = -1;
                                    } else if (line.contains('"' + start + '"')) {
                                        count = 0;
                                    } else if (count >= 0
                                            && !FROM_SCRIPT.matcher(line).find()) {
                                        count++;
                                    }
                                }
                            });
                        } catch (RuntimeException closed) {
                            // close() shuts the monitor connection: the end of the stream
                        }
                    },
                    "bench-redis-monitor");
            reader.setDaemon(true);
            reader.start();
            // MONITOR is on once it reports a command sent after it.
            try {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                do {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("Redis MONITOR did not start within 10 s");
                    }
                    markers.echo(READY);
                } while (counts.poll(100, TimeUnit.MILLISECONDS) == null);
                TimeUnit.MILLISECONDS.sleep(200); // lets the other "ready" echoes pass
                counts.clear();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }

        @Override
        protected long during(Op op) throws Exception {
            int id = next++;
            start = "lsbench-mark-" + id + "-start";
            end = "lsbench-mark-" + id + "-end";
            markers.echo(start);
            op.run();
            markers.echo(end);
            Long count = counts.poll(30, TimeUnit.SECONDS);
            if (count == null) {
                throw new IllegalStateException("Redis MONITOR never showed the end marker " + end);
            }
            return count;
        }

        @Override
        public void close() {
            markers.close();
            monitor.close();
            try {
                reader.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
