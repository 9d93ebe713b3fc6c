package org.locksmith.lock.mysql.internal;

import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;
import org.locksmith.lock.mysql.MySqlStrategy;

/**
 * Validated settings of one MySQL backend, shared by the URL provider and the builder.
 *
 * @param strategy how locks are held
 * @param table the lock table; the fence table is {@code table + "_fence"}
 * @param createSchema create missing tables at open
 * @param leaseTime lease strategy: how long a lease lives without renewal
 * @param checkInterval row/named strategies: how often held connections are pinged to detect a killed session
 * @param poolSize connections per shard for locks (each held or waiting lock uses one)
 * @param timeout how long a store operation may take (connect, borrow, statements other than lock waits)
 */
public record MySqlSettings(
        MySqlStrategy strategy,
        String table,
        boolean createSchema,
        Duration leaseTime,
        Duration checkInterval,
        int poolSize,
        Duration timeout) {

    /** Table names go into SQL text, so only a safe subset is accepted; 57 leaves room for "_fence". */
    private static final Pattern TABLE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,56}");

    public static final String DEFAULT_TABLE = "locksmith_lock";
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);
    public static final Duration DEFAULT_CHECK_INTERVAL = Duration.ofSeconds(1);
    public static final int DEFAULT_POOL_SIZE = 10;
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);

    public MySqlSettings {
        Objects.requireNonNull(strategy, "strategy");
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(leaseTime, "leaseTime");
        Objects.requireNonNull(checkInterval, "checkInterval");
        Objects.requireNonNull(timeout, "timeout");
        validateTable(table);
        if (leaseTime.compareTo(Duration.ofMillis(100)) < 0) {
            throw new IllegalArgumentException("MySQL lease time " + leaseTime.toMillis()
                    + " ms is too short: use at least 100 ms (leaseMs), a few seconds in production");
        }
        if (checkInterval.compareTo(Duration.ofMillis(10)) < 0) {
            throw new IllegalArgumentException(
                    "MySQL check interval " + checkInterval.toMillis() + " ms is too short: use at least 10 ms");
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

    /** Defaults: row strategy, table {@value #DEFAULT_TABLE}, create schema, lease 30 s, check 1 s, pool 10, 5 s. */
    public static MySqlSettings defaults() {
        return new MySqlSettings(
                MySqlStrategy.ROW,
                DEFAULT_TABLE,
                true,
                DEFAULT_LEASE,
                DEFAULT_CHECK_INTERVAL,
                DEFAULT_POOL_SIZE,
                DEFAULT_TIMEOUT);
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

    public String fenceTable() {
        return table + "_fence";
    }

    /**
     * The lock table as it goes into SQL text: backquoted, so a valid name that is also a reserved word ({@code
     * order}, {@code lock}) still works. The name is validated and cannot contain a backquote.
     */
    String quotedTable() {
        return "`" + table + "`";
    }

    /** The fence table as it goes into SQL text, backquoted. */
    String quotedFenceTable() {
        return "`" + fenceTable() + "`";
    }
}
