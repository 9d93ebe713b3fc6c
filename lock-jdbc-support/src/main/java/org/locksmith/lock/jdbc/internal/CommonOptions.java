package org.locksmith.lock.jdbc.internal;

import java.time.Duration;
import java.util.Objects;
import java.util.function.UnaryOperator;
import org.locksmith.lock.spi.LockUrl;

/**
 * The options every JDBC backend has, as its public builder and its URL provider collect them before its settings
 * record validates them: table, createSchema, checkInterval, sessionTimeout, poolSize, timeout and restartHoldOff.
 * The builders delegate their common setters here; {@link #readUrl} reads the same options from a lock URL. Each
 * setter checks only for null; the ranges are the settings record's (or the builder's) to enforce. Not thread-safe.
 */
public final class CommonOptions {
    private String table;
    private boolean createSchema = true;
    private Duration checkInterval;
    private Duration sessionTimeout;
    private Duration restartHoldOff;
    private Integer poolSize;
    private Duration timeout;

    /**
     * Options at their defaults: these, createSchema true, and sessionTimeout and restartHoldOff unset (derived, see
     * {@link #sessionTimeoutOr} and {@link #restartHoldOffOr}).
     *
     * @param poolSize the default pool size, or null where the backend derives it later
     */
    public CommonOptions(String table, Duration checkInterval, Integer poolSize, Duration timeout) {
        this.table = Objects.requireNonNull(table, "table");
        this.checkInterval = Objects.requireNonNull(checkInterval, "checkInterval");
        this.poolSize = poolSize;
        this.timeout = Objects.requireNonNull(timeout, "timeout");
    }

    /** Sets the table; {@link NullPointerException} "table" if null. */
    public void table(String table) {
        this.table = Objects.requireNonNull(table, "table");
    }

    public void createSchema(boolean createSchema) {
        this.createSchema = createSchema;
    }

    /** Sets the check interval; {@link NullPointerException} "checkInterval" if null. */
    public void checkInterval(Duration checkInterval) {
        this.checkInterval = Objects.requireNonNull(checkInterval, "checkInterval");
    }

    /** Sets the session timeout; {@link NullPointerException} "sessionTimeout" if null. */
    public void sessionTimeout(Duration sessionTimeout) {
        this.sessionTimeout = Objects.requireNonNull(sessionTimeout, "sessionTimeout");
    }

    /** Sets the restart hold-off; {@link NullPointerException} "restartHoldOff" if null. */
    public void restartHoldOff(Duration restartHoldOff) {
        this.restartHoldOff = Objects.requireNonNull(restartHoldOff, "restartHoldOff");
    }

    public void poolSize(int poolSize) {
        this.poolSize = poolSize;
    }

    /** Sets the timeout; {@link NullPointerException} "timeout" if null. */
    public void timeout(Duration timeout) {
        this.timeout = Objects.requireNonNull(timeout, "timeout");
    }

    public String table() {
        return table;
    }

    public boolean createSchema() {
        return createSchema;
    }

    public Duration checkInterval() {
        return checkInterval;
    }

    /** The pool size set, or the default given at construction (null: the backend derives it). */
    public Integer poolSize() {
        return poolSize;
    }

    public Duration timeout() {
        return timeout;
    }

    /** The session timeout set, else {@code defaultFor} applied to the check interval. */
    public Duration sessionTimeoutOr(UnaryOperator<Duration> defaultFor) {
        return sessionTimeout != null ? sessionTimeout : defaultFor.apply(checkInterval);
    }

    /** The restart hold-off set, else {@code sessionTimeout} (the resolved one). */
    public Duration restartHoldOffOr(Duration sessionTimeout) {
        return restartHoldOff != null ? restartHoldOff : sessionTimeout;
    }

    /**
     * Reads the common parameters of a lock URL over the values held (the defaults): {@code checkIntervalMs} (10 ms
     * to 1 h), {@code sessionTimeoutMs} ({@code minSessionTimeout} to {@code maxSessionTimeout}; default {@code
     * defaultSessionTimeout} of the check interval read), {@code table}, {@code createSchema}, {@code poolSize} (1 to
     * 10000; a default must be held), {@code timeoutMs} (250 ms to 1 h) and {@code restartHoldOffMs} (0 to {@code
     * maxSessionTimeout}; default the session timeout read), in this order. Every option is set afterwards.
     *
     * @return this
     * @throws IllegalArgumentException naming the URL and the parameter, for the first invalid one
     */
    public CommonOptions readUrl(
            LockUrl url,
            UnaryOperator<Duration> defaultSessionTimeout,
            Duration minSessionTimeout,
            Duration maxSessionTimeout) {
        checkInterval =
                url.millisParameter("checkIntervalMs", checkInterval, Duration.ofMillis(10), Duration.ofHours(1));
        sessionTimeout = url.millisParameter(
                "sessionTimeoutMs", sessionTimeoutOr(defaultSessionTimeout), minSessionTimeout, maxSessionTimeout);
        table = url.parameter("table", table);
        createSchema = url.booleanParameter("createSchema", createSchema);
        poolSize = url.intParameter("poolSize", Objects.requireNonNull(poolSize, "poolSize"), 1, 10_000);
        timeout = url.millisParameter("timeoutMs", timeout, Duration.ofMillis(250), Duration.ofHours(1));
        restartHoldOff = url.millisParameter(
                "restartHoldOffMs", restartHoldOffOr(sessionTimeout), Duration.ZERO, maxSessionTimeout);
        return this;
    }
}
