package org.locksmith.lock.redis.internal;

import java.net.ConnectException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.NoSuchElementException;
import java.util.concurrent.TimeUnit;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.spi.AcquireRequest;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * What a Jedis failure or reply means to the lock: an error that passes once a failover or migration has settled,
 * a connection the server closed, a command that never left, a script's numeric reply. Stateless; every method is a
 * pure reading of its argument, except the back-offs, which sleep.
 */
final class RedisFailures {
    /**
     * How long a script answered "not now" ({@link #isPassing}: a slot migration or a failover in progress) is sent
     * again, with back-off. A waiting acquire retries for as long as its deadline allows.
     */
    static final long TRY_AGAIN_MILLIS = 2_000;
    /** The longest back-off between attempts of a waiter whose server is failing over. */
    static final long FAILOVER_BACK_OFF_MILLIS = 100;

    private RedisFailures() {}

    /** The backend's failure: "Redis at {@code address} {@code what}: {@code e}'s message", caused by {@code e}. */
    static LockBackendException failure(String address, String what, Exception e) {
        return new LockBackendException("Redis at " + address + " " + what + ": " + e.getMessage(), e);
    }

    /**
     * An error reply that passes once the servers have settled: {@code TRYAGAIN} (a multi-key command on a slot
     * being migrated), {@code READONLY} (a write sent to a master that was just made a replica, before the client
     * follows the new one), {@code UNBLOCKED} (a blocked {@code BLPOP} ended because its master became a replica),
     * {@code CLUSTERDOWN} (a cluster without a master for some slot, as during an election), {@code MASTERDOWN} and
     * {@code LOADING}. A script answered so did not run its writes.
     */
    static boolean isPassing(JedisDataException e) {
        String m = String.valueOf(e.getMessage());
        return m.startsWith("TRYAGAIN")
                || m.startsWith("READONLY")
                || m.startsWith("UNBLOCKED")
                || m.startsWith("CLUSTERDOWN")
                || m.startsWith("MASTERDOWN")
                || m.startsWith("LOADING");
    }

    /** Whether {@code e} is the backend's wrapping of a passing error reply (see {@link #isPassing}). */
    static boolean isPassingFailure(RuntimeException e) {
        return e.getCause() instanceof JedisDataException d && isPassing(d);
    }

    /**
     * Whether the server closed the connection (end of stream, reset), as opposed to not answering in time or not
     * accepting connections: only the former means this client's session with Redis ended.
     */
    static boolean closedByServer(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SocketTimeoutException || t instanceof ConnectException) {
                return false;
            }
            String message = String.valueOf(t.getMessage());
            if (t instanceof JedisConnectionException && message.contains("Unexpected end of stream")) {
                return true;
            }
            if (t instanceof SocketException
                    && (message.contains("reset") || message.contains("Broken pipe") || message.contains("closed"))) {
                return true;
            }
            for (Throwable s : t.getSuppressed()) {
                if (closedByServer(s)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Whether a failure happened before a command could reach the server (no connection to send it on). */
    static boolean neverSent(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof ConnectException || t instanceof NoSuchElementException) {
                return true;
            }
        }
        return connectFailure(e) != null;
    }

    /**
     * The connection failure behind {@code e}, if a new connection could not be made: in its causes, or suppressed by
     * one of them (Jedis reports "Failed to connect to host:port" and adds each address's {@code ConnectException}
     * as suppressed, not as the cause).
     */
    static ConnectException connectFailure(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof ConnectException c) {
                return c;
            }
            for (Throwable s : t.getSuppressed()) {
                if (s instanceof ConnectException c) {
                    return c;
                }
            }
        }
        return null;
    }

    /** A script's integer reply, whichever way the protocol delivered it. */
    static long asLong(Object reply) {
        if (reply instanceof Long l) {
            return l;
        }
        if (reply instanceof byte[] b) {
            return Long.parseLong(new String(b, StandardCharsets.US_ASCII));
        }
        if (reply instanceof String s) {
            return Long.parseLong(s);
        }
        throw new LockBackendException("Unexpected reply from a Redis lock script: " + reply);
    }

    /**
     * Whether a waiting request whose attempt failed with {@code e} should look again after a back-off: the server
     * answered that it is failing over (see {@link #isPassing}) and the deadline leaves time. Sleeps the back-off.
     */
    static boolean waitOutFailover(AcquireRequest request, RuntimeException e) {
        if (request.isTry() || request.isCancelled() || !(e.getCause() instanceof JedisDataException d)) {
            return false;
        }
        long left = request.remainingNanos();
        if (!isPassing(d) || left <= 0) {
            return false;
        }
        failoverBackOff(left);
        return true;
    }

    /** Sleeps {@value #FAILOVER_BACK_OFF_MILLIS} ms, or less if {@code leftNanos} is shorter (at least 1 ms). */
    static void failoverBackOff(long leftNanos) {
        sleepQuietly(Math.max(1, Math.min(FAILOVER_BACK_OFF_MILLIS, TimeUnit.NANOSECONDS.toMillis(leftNanos))));
    }

    /** Sleeps for a back-off; an interrupt ends the sleep and stays set. */
    static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
