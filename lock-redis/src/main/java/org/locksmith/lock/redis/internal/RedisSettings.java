package org.locksmith.lock.redis.internal;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import org.locksmith.lock.spi.LockUrl;

/**
 * The settings a {@link RedisLockBackend} runs with, validated before any I/O.
 *
 * @param leaseTime how long Redis keeps a lease without renewal
 * @param prefix the prefix of every key the backend writes; must not contain <code>{</code> or <code>}</code>
 * @param maxBlockingWaiters how many threads may block in {@code BLPOP} at once (capped by the wait pool); more
 *     waiters queue locally
 * @param address where the store is, for messages (never contains a password)
 * @param restartHoldOff how long after a server starts it grants nothing: a server that restarted without its data
 *     (no persistence, or writes lost in the crash) has forgotten the locks it granted, whose holders may believe
 *     they hold for up to their lease time; zero turns the hold-off off
 * @param waitReplicas how many replicas must acknowledge a grant and each renewal ({@code WAIT}) before they count;
 *     0 (the default) waits for none
 * @param waitReplicasTimeout how long a {@code WAIT} waits for them
 */
public record RedisSettings(
        Duration leaseTime,
        String prefix,
        int maxBlockingWaiters,
        String address,
        Duration restartHoldOff,
        int waitReplicas,
        Duration waitReplicasTimeout) {

    /** URL parameter: how long Redis keeps a lease without renewal. */
    public static final String LEASE_MS = "leaseMs";
    /** URL parameter: the prefix of every key written. */
    public static final String PREFIX = "prefix";
    /** URL parameter: how many threads may block in {@code BLPOP} at once. */
    public static final String WAIT_POOL_SIZE = "waitPoolSize";
    /** URL parameter: what opening does if a server may evict lock keys. */
    public static final String EVICTION_CHECK = "evictionCheck";
    /** URL parameter: how long after a server starts it grants no lock. */
    public static final String RESTART_HOLD_OFF_MS = "restartHoldOffMs";
    /** URL parameter: how many replicas must acknowledge a grant and each renewal. */
    public static final String WAIT_REPLICAS = "waitReplicas";
    /** URL parameter: how long a {@code WAIT} for replicas waits. */
    public static final String WAIT_REPLICAS_TIMEOUT_MS = "waitReplicasTimeoutMs";

    /**
     * The URL parameters that configure locks rather than connections: the ones that still apply on an
     * application's own client.
     */
    public static final Set<String> LOCK_PARAMETERS = Set.of(
            LEASE_MS,
            PREFIX,
            WAIT_POOL_SIZE,
            EVICTION_CHECK,
            RESTART_HOLD_OFF_MS,
            WAIT_REPLICAS,
            WAIT_REPLICAS_TIMEOUT_MS);

    /**
     * The lock settings of {@code url}, with their defaults, ranges and the checks of this record, before any I/O:
     * the one place these parameters are read, for URL-opened clients and clients on an application's connection.
     *
     * @param address where the client connects, for messages
     * @throws IllegalArgumentException naming the URL and the parameter, if a setting is invalid
     */
    public static RedisSettings from(LockUrl url, String address) {
        Duration lease = url.millisParameter(LEASE_MS, DEFAULT_LEASE, MIN_LEASE, MAX_LEASE);
        String prefix = url.parameter(PREFIX, DEFAULT_PREFIX);
        int waitPoolSize = url.intParameter(WAIT_POOL_SIZE, DEFAULT_WAIT_POOL_SIZE, 1, 10_000);
        Duration holdOff = url.millisParameter(RESTART_HOLD_OFF_MS, lease, Duration.ZERO, MAX_LEASE);
        int waitReplicas = url.intParameter(WAIT_REPLICAS, 0, 0, MAX_WAIT_REPLICAS);
        Duration waitReplicasTimeout = url.millisParameter(
                WAIT_REPLICAS_TIMEOUT_MS, DEFAULT_WAIT_REPLICAS_TIMEOUT, Duration.ofMillis(1), MAX_LEASE);
        try {
            // the record checks the prefix and the settings together (the replica timeout against the lease)
            return new RedisSettings(lease, prefix, waitPoolSize, address, holdOff, waitReplicas, waitReplicasTimeout);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("Lock URL " + url + ": " + e.getMessage(), e);
        }
    }

    /** What opening does if a server may evict lock keys ({@value #EVICTION_CHECK}, default warn). */
    public static EvictionGuard.Mode evictionCheck(LockUrl url) {
        String check = url.parameter(EVICTION_CHECK, "warn");
        try {
            return EvictionGuard.Mode.valueOf(check.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "Lock URL " + url + ": parameter " + EVICTION_CHECK + "='" + check
                            + "' must be warn, refuse or ignore",
                    e);
        }
    }

    /** The most replicas {@code waitReplicas} may name. */
    public static final int MAX_WAIT_REPLICAS = 64;
    /** The default time a {@code WAIT} for replicas waits. */
    public static final Duration DEFAULT_WAIT_REPLICAS_TIMEOUT = Duration.ofMillis(200);

    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);
    public static final Duration MIN_LEASE = Duration.ofMillis(100);
    public static final Duration MAX_LEASE = Duration.ofDays(1);
    public static final String DEFAULT_PREFIX = "locksmith:";
    public static final int DEFAULT_WAIT_POOL_SIZE = 16;
    public static final int DEFAULT_POOL_SIZE = 8;

    /** Settings that wait for no replica. */
    public RedisSettings(
            Duration leaseTime, String prefix, int maxBlockingWaiters, String address, Duration restartHoldOff) {
        this(leaseTime, prefix, maxBlockingWaiters, address, restartHoldOff, 0, DEFAULT_WAIT_REPLICAS_TIMEOUT);
    }

    public RedisSettings {
        Objects.requireNonNull(leaseTime, "leaseTime");
        Objects.requireNonNull(waitReplicasTimeout, "waitReplicasTimeout");
        if (waitReplicas < 0 || waitReplicas > MAX_WAIT_REPLICAS) {
            throw new IllegalArgumentException(
                    "Redis lock waitReplicas must be from 0 to " + MAX_WAIT_REPLICAS + ", got " + waitReplicas);
        }
        if (waitReplicasTimeout.toMillis() < 1
                || (waitReplicas > 0 && waitReplicasTimeout.compareTo(leaseTime.dividedBy(3)) > 0)) {
            throw new IllegalArgumentException("Redis lock waitReplicasTimeout " + waitReplicasTimeout.toMillis()
                    + " ms must be from 1 ms to a third of the lease ("
                    + leaseTime.dividedBy(3).toMillis()
                    + " ms): renewals, every third of a lease, wait that long for replicas");
        }
        Objects.requireNonNull(prefix, "prefix");
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(restartHoldOff, "restartHoldOff");
        if (restartHoldOff.isNegative() || restartHoldOff.compareTo(MAX_LEASE) > 0) {
            throw new IllegalArgumentException("Redis lock restart hold-off " + restartHoldOff.toMillis()
                    + " ms must be from 0 to " + MAX_LEASE.toMillis() + " ms");
        }
        if (leaseTime.compareTo(MIN_LEASE) < 0 || leaseTime.compareTo(MAX_LEASE) > 0) {
            throw new IllegalArgumentException("Redis lock lease time " + leaseTime.toMillis() + " ms must be from "
                    + MIN_LEASE.toMillis() + " ms to " + MAX_LEASE.toMillis() + " ms");
        }
        validatePrefix(prefix);
        if (maxBlockingWaiters < 1) {
            throw new IllegalArgumentException(
                    "Redis lock maxBlockingWaiters must be at least 1 (it is the number of threads that may block in"
                            + " BLPOP at once), got " + maxBlockingWaiters);
        }
    }

    /** Rejects prefixes that would move locks between cluster slots or make key names ambiguous. */
    public static String validatePrefix(String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        if (prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
            throw new IllegalArgumentException("Redis lock key prefix '" + prefix
                    + "' must not contain '{' or '}': Redis Cluster would hash the braces' content instead of each"
                    + " lock's own hash tag, putting every lock in one slot");
        }
        if (prefix.length() > 256) {
            throw new IllegalArgumentException(
                    "Redis lock key prefix is " + prefix.length() + " chars long; keep it under 256");
        }
        return prefix;
    }

    /**
     * How long a wake-up stays in its list when nobody takes it: long enough to bridge a waiter's step from a failed
     * attempt into {@code BLPOP}, short enough that a stale one vanishes soon (a stale wake-up costs one extra
     * attempt, a lost one at most the holder's remaining lease).
     */
    long wakeTtlMillis() {
        return Math.max(1_000, Math.min(leaseTime.toMillis(), 10_000));
    }
}
