package org.locksmith.lock.postgres.internal;

import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;
import org.locksmith.lock.jdbc.internal.CommonOptions;
import org.locksmith.lock.spi.LockUrl;

/**
 * Validated settings of one PostgreSQL backend, shared by the URL provider and the builder.
 *
 * @param table the key table; the acquire function is {@code table + "_acquire"}
 * @param createSchema create the table and the function at open if missing
 * @param checkInterval how often each held lock's session is checked (a statement on the holding connection)
 * @param sessionTimeout the server's {@code idle_session_timeout} on a session while it holds a lock, so that the
 *     session of a dead, frozen or cut-off client (and with it its locks) ends after this much silence; at least
 *     twice {@code checkInterval}; the core trusts a held lock for this long after its last check, less its margin
 * @param poolSize connections for locks (each held or waiting lock uses one)
 * @param timeout how long a store operation other than a lock wait may take (connect, borrow, statements)
 * @param restartHoldOff how long after a server starts it grants no lock: a restart ends every session, and with
 *     them the locks, while their holders may believe they hold until their next check; zero turns it off
 */
public record PostgresSettings(
        String table,
        boolean createSchema,
        Duration checkInterval,
        Duration sessionTimeout,
        int poolSize,
        Duration timeout,
        Duration restartHoldOff) {

    /** Table names go into SQL text, so only a safe subset is accepted; 54 leaves room for "_acquire". */
    private static final Pattern TABLE = Pattern.compile("[a-z_][a-z0-9_]{0,53}");

    public static final String DEFAULT_TABLE = "locksmith_lock";
    public static final Duration DEFAULT_CHECK_INTERVAL = Duration.ofSeconds(1);
    /** The default session timeout is this many check intervals. */
    public static final int DEFAULT_SESSION_CHECKS = 5;
    /** The largest {@code idle_session_timeout} the server accepts (INT_MAX milliseconds). */
    public static final Duration MAX_SESSION_TIMEOUT = Duration.ofMillis(Integer.MAX_VALUE);

    public static final int DEFAULT_POOL_SIZE = 10;
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);

    public PostgresSettings {
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(checkInterval, "checkInterval");
        Objects.requireNonNull(sessionTimeout, "sessionTimeout");
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(restartHoldOff, "restartHoldOff");
        if (!TABLE.matcher(table).matches()) {
            throw new IllegalArgumentException("table '" + table + "' is invalid: use 1-54 characters from a-z, 0-9"
                    + " and _, not starting with a digit (it is used unquoted in SQL)");
        }
        requireRange("checkInterval", checkInterval, Duration.ofMillis(10), Duration.ofHours(1));
        requireRange("sessionTimeout", sessionTimeout, Duration.ofMillis(100), MAX_SESSION_TIMEOUT);
        requireRange("timeout", timeout, Duration.ofMillis(250), Duration.ofHours(1));
        requireRange("restartHoldOff", restartHoldOff, Duration.ZERO, MAX_SESSION_TIMEOUT);
        if (sessionTimeout.compareTo(checkInterval.multipliedBy(2)) < 0) {
            throw new IllegalArgumentException("sessionTimeout (" + sessionTimeout.toMillis()
                    + " ms) must be at least twice checkInterval (" + checkInterval.toMillis()
                    + " ms): the checks are what keeps a live holder's session from timing out");
        }
        if (poolSize < 1 || poolSize > 10_000) {
            throw new IllegalArgumentException("poolSize must be 1 to 10000, was " + poolSize);
        }
    }

    /** The defaults, with the session timeout and hold-off derived from the check interval. */
    public static PostgresSettings defaults() {
        Duration session = defaultSessionTimeout(DEFAULT_CHECK_INTERVAL);
        return new PostgresSettings(
                DEFAULT_TABLE, true, DEFAULT_CHECK_INTERVAL, session, DEFAULT_POOL_SIZE, DEFAULT_TIMEOUT, session);
    }

    /**
     * The settings of a {@code postgresql://} URL's parameters, with their defaults and ranges, checked before any
     * I/O: the one place these parameters are read (URL clients and clients on an application's data source).
     *
     * @throws IllegalArgumentException naming the parameter, if one is invalid
     */
    public static PostgresSettings from(LockUrl url) {
        return of(options()
                .readUrl(url, PostgresSettings::defaultSessionTimeout, Duration.ofMillis(100), MAX_SESSION_TIMEOUT));
    }

    /** The builder's and the URL's options at their defaults. */
    public static CommonOptions options() {
        return new CommonOptions(DEFAULT_TABLE, DEFAULT_CHECK_INTERVAL, DEFAULT_POOL_SIZE, DEFAULT_TIMEOUT);
    }

    /**
     * The settings of {@code options}, the session timeout defaulting to {@link #defaultSessionTimeout} of the
     * check interval and the restart hold-off to the session timeout.
     *
     * @throws IllegalArgumentException if a setting is invalid
     */
    public static PostgresSettings of(CommonOptions options) {
        Duration session = options.sessionTimeoutOr(PostgresSettings::defaultSessionTimeout);
        return new PostgresSettings(
                options.table(),
                options.createSchema(),
                options.checkInterval(),
                session,
                options.poolSize(),
                options.timeout(),
                options.restartHoldOffOr(session));
    }

    /** {@value #DEFAULT_SESSION_CHECKS} check intervals, at least one second. */
    public static Duration defaultSessionTimeout(Duration checkInterval) {
        Duration d = checkInterval.multipliedBy(DEFAULT_SESSION_CHECKS);
        return d.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : d;
    }

    private static void requireRange(String name, Duration d, Duration min, Duration max) {
        if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
            throw new IllegalArgumentException(name + " must be between " + min.toMillis() + " ms and " + max.toMillis()
                    + " ms, was " + d.toMillis() + " ms");
        }
    }
}
