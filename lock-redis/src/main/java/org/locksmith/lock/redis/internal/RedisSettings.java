package org.locksmith.lock.redis.internal;

import java.time.Duration;
import java.util.Objects;

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
