package org.locksmith.lock.redis.internal;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Connection;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.exceptions.JedisException;

/**
 * Where a waiter sends one {@code BLPOP}: on a connection of the wait client's pool, lent by its {@link RedisTopology}.
 *
 * <p>Jedis sends a blocking command with the client's "blocking socket timeout", which is infinite by default: a
 * server that stops answering (SIGSTOP, partition) would hang the waiter for ever, past its deadline and past any
 * cancel signal (which cannot reach that server either). So the {@code BLPOP} is sent here on a connection taken from
 * the client's pool, as an ordinary command whose socket timeout is set, for this one call, to the {@code BLPOP}'s own
 * timeout plus the connection's command timeout plus {@value #BLPOP_LATENESS_MILLIS} ms for a server tick: a dead
 * server fails the waiter at most that slack after the timeout.
 */
final class WaitConnections {
    /** Slack used when the application's connections have no read timeout at all (0 = infinite in Jedis). */
    static final int DEFAULT_SLACK_MILLIS = 2_000;
    /**
     * How late a healthy server may answer a {@code BLPOP} whose timeout passed: it looks at blocked clients once per
     * server tick (100 ms at the default {@code hz 10}). Added to the socket timeout, so that a command timeout below
     * a tick does not fail healthy waits.
     */
    static final int BLPOP_LATENESS_MILLIS = 250;

    private final RedisTopology client;
    private final Executor closer;

    /**
     * @param client the client waiters block on
     * @param closer where a broken connection is given back to its pool: commons-pool 2.13 replaces an invalidated
     *     connection at once, on the returning thread, which on a stalled server costs that thread a whole
     *     command timeout more
     * @throws IllegalArgumentException if the client lends no connection (see {@link RedisTopology#lendsConnections})
     */
    WaitConnections(RedisTopology client, Executor closer) {
        this.client = client;
        this.closer = closer;
        if (!client.lendsConnections()) {
            throw new IllegalArgumentException("Redis lock waiters need a pooled client whose connections they can"
                    + " time out one BLPOP at a time: a RedisClient, RedisSentinelClient, RedisClusterClient or"
                    + " JedisCluster, not " + client.client().getClass().getName()
                    + "; pass one of those (as the client or as waitClient)");
        }
    }

    /**
     * {@code BLPOP wake cancel timeout} on the node of {@code keys}, its socket timeout bounded as described above.
     *
     * @return the name of the list popped from, or null if the timeout passed
     * @throws redis.clients.jedis.exceptions.JedisException if the server failed, did not answer in time, or closed
     *     the connection (which the pool then discards)
     */
    String blpop(LockKeys keys, String cancelKey, long timeoutMillis) {
        Connection connection = client.connection(keys.slot());
        try {
            int commandTimeout = connection.getSoTimeout();
            int slack = commandTimeout > 0 ? commandTimeout : DEFAULT_SLACK_MILLIS;
            connection.setSoTimeout((int) Math.min(Integer.MAX_VALUE, timeoutMillis + slack + BLPOP_LATENESS_MILLIS));
            try {
                // Not marked blocking: Jedis would switch to its (infinite) blocking socket timeout.
                Object reply = connection.executeCommand(new CommandArguments(Protocol.Command.BLPOP)
                        .key(keys.wake())
                        .key(cancelKey)
                        .add(seconds(timeoutMillis)));
                return poppedList(reply);
            } finally {
                if (!connection.isBroken()) {
                    connection.setSoTimeout(commandTimeout);
                }
            }
        } finally {
            giveBack(connection);
        }
    }

    /** The name of the list a {@code BLPOP} reply says it popped from, or null if it timed out. */
    private static String poppedList(Object reply) {
        if (!(reply instanceof List<?> popped) || popped.isEmpty()) {
            return null;
        }
        Object key = popped.get(0);
        if (key instanceof byte[] b) {
            return new String(b, StandardCharsets.UTF_8);
        }
        return String.valueOf(key);
    }

    /** Returns {@code connection} to its pool, a broken one from the {@code closer} (see the constructor). */
    private void giveBack(Connection connection) {
        if (!connection.isBroken()) {
            connection.close();
            return;
        }
        connection.disconnect(); // the socket goes now, whatever the pool does
        try {
            closer.execute(() -> closeQuietly(connection));
        } catch (RejectedExecutionException closing) {
            closeQuietly(connection);
        }
    }

    /** Gives a broken connection back; the pool's replacement may fail to connect (server down), which is fine. */
    private static void closeQuietly(Connection connection) {
        try {
            connection.close();
        } catch (JedisException e) {
            // "Could not return the broken resource": the replacement could not connect; the next borrow retries
        }
    }

    /** BLPOP's timeout in seconds with millisecond precision (Redis 6+ accepts decimals); never 0 (= for ever). */
    static String seconds(long millis) {
        long ms = Math.max(1, millis);
        return ms / 1000 + "." + String.format(Locale.ROOT, "%03d", ms % 1000);
    }
}
