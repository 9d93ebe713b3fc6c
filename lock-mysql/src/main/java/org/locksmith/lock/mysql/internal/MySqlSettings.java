package org.locksmith.lock.mysql.internal;

import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;
import org.locksmith.lock.jdbc.internal.CommonOptions;
import org.locksmith.lock.mysql.MySqlStrategy;
import org.locksmith.lock.spi.LockUrl;

/**
 * Validated settings of one MySQL backend, shared by the URL provider and the builder.
 *
 * @param strategy how locks are held
 * @param table the lock table; the fence table is {@code table + "_fence"}
 * @param createSchema create missing tables at open
 * @param leaseTime lease strategy: how long a lease lives without renewal
 * @param checkInterval row/named strategies: how often held connections are pinged to detect a killed session
 * @param sessionTimeout row/named strategies: the server's {@code wait_timeout} on lock connections, so that the
 *     session of a dead, frozen or partitioned client (and with it its locks) ends after this much silence; whole
 *     seconds, at least twice {@code checkInterval} (the pings keep a live holder's session busy)
 * @param poolSize connections per shard for locks (each held or waiting lock uses one)
 * @param timeout how long a store operation may take (connect, borrow, statements other than lock waits)
 * @param replaceShardMap overwrite the shard map recorded in the databases with this client's (only with every
 *     client of the old map stopped; see {@code ShardMap})
 * @param restartHoldOff row/named strategies: how long after a server starts it grants no lock. A restart ends every
 *     session, and with them the locks, while their holders may believe they hold until their next check finds the
 *     session gone (up to {@code sessionTimeout}); zero turns it off
 */
public record MySqlSettings(
        MySqlStrategy strategy,
        String table,
        boolean createSchema,
        Duration leaseTime,
        Duration checkInterval,
        Duration sessionTimeout,
        int poolSize,
        Duration timeout,
        boolean replaceShardMap,
        Duration restartHoldOff) {

    /** Table names go into SQL text, so only a safe subset is accepted; 57 leaves room for "_fence". */
    private static final Pattern TABLE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,56}");

    public static final String DEFAULT_TABLE = "locksmith_lock";
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);
    public static final Duration DEFAULT_CHECK_INTERVAL = Duration.ofSeconds(1);

    /** The default session timeout is this many check intervals, rounded up to whole seconds. */
    public static final int DEFAULT_SESSION_CHECKS = 5;

    /** The server's largest {@code wait_timeout} (365 days). */
    public static final Duration MAX_SESSION_TIMEOUT = Duration.ofDays(365);

    public static final int DEFAULT_POOL_SIZE = 10;
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);

    public MySqlSettings {
        Objects.requireNonNull(strategy, "strategy");
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(leaseTime, "leaseTime");
        Objects.requireNonNull(checkInterval, "checkInterval");
        Objects.requireNonNull(sessionTimeout, "sessionTimeout");
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(restartHoldOff, "restartHoldOff");
        validateTable(table);
        if (restartHoldOff.isNegative() || restartHoldOff.compareTo(MAX_SESSION_TIMEOUT) > 0) {
            throw new IllegalArgumentException("MySQL restart hold-off " + restartHoldOff.toMillis()
                    + " ms must be from 0 to 365 days (restartHoldOffMs)");
        }
        if (leaseTime.compareTo(Duration.ofMillis(100)) < 0) {
            throw new IllegalArgumentException("MySQL lease time " + leaseTime.toMillis()
                    + " ms is too short: use at least 100 ms (leaseMs), a few seconds in production");
        }
        if (checkInterval.compareTo(Duration.ofMillis(10)) < 0) {
            throw new IllegalArgumentException(
                    "MySQL check interval " + checkInterval.toMillis() + " ms is too short: use at least 10 ms");
        }
        if (sessionTimeout.toNanos() % 1_000_000_000L != 0
                || sessionTimeout.compareTo(Duration.ofSeconds(1)) < 0
                || sessionTimeout.compareTo(MAX_SESSION_TIMEOUT) > 0) {
            throw new IllegalArgumentException("MySQL session timeout " + sessionTimeout.toMillis()
                    + " ms must be whole seconds from 1 s to 365 days (sessionTimeoutMs): it becomes the server's"
                    + " wait_timeout, which counts seconds");
        }
        if (sessionTimeout.compareTo(checkInterval.multipliedBy(2)) < 0) {
            throw new IllegalArgumentException("MySQL session timeout " + sessionTimeout.toMillis()
                    + " ms is shorter than two check intervals ("
                    + checkInterval.multipliedBy(2).toMillis()
                    + " ms): the pings every checkIntervalMs are what keep a live holder's session from timing out;"
                    + " raise sessionTimeoutMs or lower checkIntervalMs");
        }
        if (poolSize < 1 || poolSize > 10_000) {
            throw new IllegalArgumentException("MySQL poolSize " + poolSize
                    + " must be from 1 to 10000: one connection per lock held or waited for at once, per shard");
        }
        if (timeout.compareTo(Duration.ofMillis(250)) < 0) {
            throw new IllegalArgumentException("MySQL timeout " + timeout.toMillis()
                    + " ms is too short: use at least 250 ms (HikariCP's minimum connection timeout)");
        }
    }

    /**
     * The settings of a {@code mysql://} URL's parameters, with their defaults and ranges, checked before any I/O:
     * the one place these parameters are read (URL clients and clients on an application's data source).
     *
     * @throws IllegalArgumentException naming the parameter, if one is invalid
     */
    public static MySqlSettings from(LockUrl url) {
        MySqlSettings d = MySqlSettings.defaults();
        CommonOptions o = new CommonOptions(d.table(), d.checkInterval(), d.poolSize(), d.timeout())
                .readUrl(
                        url,
                        MySqlSettings::defaultSessionTimeout,
                        Duration.ofSeconds(1),
                        MySqlSettings.MAX_SESSION_TIMEOUT);
        Duration session = o.sessionTimeoutOr(MySqlSettings::defaultSessionTimeout);
        return new MySqlSettings(
                MySqlStrategy.parse(url.parameter("strategy", d.strategy().urlValue())),
                o.table(),
                o.createSchema(),
                url.millisParameter("leaseMs", d.leaseTime(), Duration.ofMillis(100), Duration.ofDays(1)),
                o.checkInterval(),
                session,
                o.poolSize(),
                o.timeout(),
                url.booleanParameter("replaceShardMap", d.replaceShardMap()),
                o.restartHoldOffOr(session));
    }

    /**
     * Defaults: row strategy, table {@value #DEFAULT_TABLE}, create schema, lease 30 s, check 1 s, session 5 s, pool
     * 10, 5 s, keep the recorded shard map, restart hold-off 5 s (the session timeout).
     */
    public static MySqlSettings defaults() {
        return new MySqlSettings(
                MySqlStrategy.ROW,
                DEFAULT_TABLE,
                true,
                DEFAULT_LEASE,
                DEFAULT_CHECK_INTERVAL,
                defaultSessionTimeout(DEFAULT_CHECK_INTERVAL),
                DEFAULT_POOL_SIZE,
                DEFAULT_TIMEOUT,
                false,
                defaultSessionTimeout(DEFAULT_CHECK_INTERVAL));
    }

    /**
     * The session timeout used where none is given: {@value #DEFAULT_SESSION_CHECKS} check intervals, rounded up to
     * whole seconds, at least 2 s (a shorter one ends live sessions on a scheduling hiccup), at most the server's
     * maximum.
     */
    public static Duration defaultSessionTimeout(Duration checkInterval) {
        long nanos = checkInterval.toNanos() >= MAX_SESSION_TIMEOUT.toNanos() / DEFAULT_SESSION_CHECKS
                ? MAX_SESSION_TIMEOUT.toNanos()
                : checkInterval.toNanos() * DEFAULT_SESSION_CHECKS;
        return Duration.ofSeconds(
                Math.min(MAX_SESSION_TIMEOUT.toSeconds(), Math.max(2, (nanos + 999_999_999L) / 1_000_000_000L)));
    }

    /** {@link #sessionTimeout} in the whole seconds of {@code wait_timeout}. */
    long sessionSeconds() {
        return sessionTimeout.toSeconds();
    }

    /**
     * Checks a table name before it is put into SQL text.
     *
     * @throws IllegalArgumentException naming the rule
     */
    public static void validateTable(String table) {
        if (!TABLE.matcher(table).matches()) {
            throw new IllegalArgumentException("MySQL lock table name '" + table
                    + "' is invalid: use 1-57 characters from A-Z, a-z, 0-9 and _, not starting with a digit");
        }
    }
}
