package org.locksmith.lock.redis.internal;

import static org.locksmith.lock.redis.internal.RedisFailures.asLong;
import static org.locksmith.lock.redis.internal.RedisFailures.closedByServer;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.locksmith.lock.LockBackendException;
import redis.clients.jedis.Connection;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * Runs {@link LockScripts} on the command client and maps Jedis failures to {@link LockBackendException}s naming the
 * address. A connection the server closed (CLIENT KILL, restart) fails at its next use; every script is safe to send
 * again (acquire re-grants to the same owner, renew re-extends, a release recognizes its own earlier release by the
 * record it leaves, see {@link LockScripts#RELEASE}), so the call is retried once on a fresh connection after the
 * pool's idle, equally dead, connections are dropped. A script answered "not now" ({@link RedisFailures#isPassing}:
 * {@code TRYAGAIN} while its slot is being migrated, {@code READONLY} from a master just demoted, {@code CLUSTERDOWN}
 * while a cluster elects a new master) is sent again with back-off until the client follows the change, for up to
 * {@value RedisFailures#TRY_AGAIN_MILLIS} ms. With {@code waitReplicas}, {@link #scriptOn} pipelines {@code WAIT}
 * after the script on the same connection.
 *
 * <p>Thread-safe; holds no state of its own beyond the clients and settings.
 */
final class ScriptRunner {
    private static final System.Logger LOG = System.getLogger("org.locksmith.lock.redis");

    private final RedisTopology commands;
    private final RedisTopology waits;
    private final RedisSettings settings;

    ScriptRunner(RedisTopology commands, RedisTopology waits, RedisSettings settings) {
        this.commands = commands;
        this.waits = waits;
        this.settings = settings;
    }

    /** The client short commands go to, for a single call without retries (a clean-up, a cancel signal). */
    UnifiedJedis commandClient() {
        return commands.client();
    }

    /** A script's reply, and how many replicas acknowledged its writes ({@code WAIT}). */
    record Replicated(Object reply, long acknowledged) {}

    /** Runs a script on the command pool, with the retries described on the class. */
    Object script(String script, String sha, List<String> keys, List<String> args) {
        return retryingPassingErrors(() -> runOnce(script, sha, keys, args));
    }

    /**
     * {@link #script}, or, when the client waits for replicas, the script and {@code WAIT} pipelined on one
     * connection to the node of {@code slot}, giving a {@link Replicated}. The same retries apply.
     */
    Object scriptOn(int slot, String script, String sha, List<String> keys, List<String> args) {
        if (settings.waitReplicas() == 0) {
            return script(script, sha, keys, args);
        }
        return retryingPassingErrors(() -> {
            try {
                return runReplicated(slot, script, sha, keys, args);
            } catch (JedisException e) {
                if (closedByServer(e)) {
                    connectionClosed(e);
                } else if (!(e instanceof JedisDataException)) {
                    followMaster();
                }
                throw failure("failed", e);
            }
        });
    }

    /** Runs {@code call}, sending it again as {@link #script} describes while the server answers "not now". */
    private Object retryingPassingErrors(Supplier<Object> call) {
        long giveUpAt = 0; // read the clock only once a TRYAGAIN came: none on the usual path
        long backOffMillis = 5;
        while (true) {
            try {
                return call.get();
            } catch (LockBackendException e) {
                if (!RedisFailures.isPassingFailure(e)) {
                    throw e;
                }
                followMaster();
                long now = System.nanoTime();
                if (giveUpAt == 0) {
                    giveUpAt = now + TimeUnit.MILLISECONDS.toNanos(RedisFailures.TRY_AGAIN_MILLIS);
                } else if (now + TimeUnit.MILLISECONDS.toNanos(backOffMillis) - giveUpAt > 0) {
                    throw e;
                }
            }
            // No wake-up to wait for: Redis does not announce the end of a migration.
            RedisFailures.sleepQuietly(backOffMillis);
            backOffMillis = Math.min(100, backOffMillis * 2);
        }
    }

    private Object runOnce(String script, String sha, List<String> keys, List<String> args) {
        try {
            return LockScripts.run(commands.client(), script, sha, keys, args);
        } catch (JedisException e) {
            if (!closedByServer(e)) {
                if (!(e instanceof JedisDataException) && followMaster()) {
                    // Sentinel: the master refused or dropped the connection and the sentinels name another one.
                    return runAgain(script, sha, keys, args);
                }
                throw failure("failed", e);
            }
            followMaster();
            connectionClosed(e);
            return runAgain(script, sha, keys, args);
        }
    }

    private Object runAgain(String script, String sha, List<String> keys, List<String> args) {
        try {
            return LockScripts.run(commands.client(), script, sha, keys, args);
        } catch (JedisException again) {
            throw failure("failed", again);
        }
    }

    private Replicated runReplicated(int slot, String script, String sha, List<String> keys, List<String> args) {
        return LockScripts.uninterrupted(() -> {
            try (Connection c = commands.connection(slot)) {
                return withWait(c, () -> {
                    c.sendCommand(Protocol.Command.EVALSHA, scriptArguments(sha, keys, args));
                    c.sendCommand(Protocol.Command.WAIT, waitArguments());
                    List<Object> replies = c.getMany(2);
                    if (replies.get(0) instanceof JedisDataException d
                            && String.valueOf(d.getMessage()).startsWith("NOSCRIPT")) {
                        c.sendCommand(Protocol.Command.EVAL, scriptArguments(script, keys, args));
                        c.sendCommand(Protocol.Command.WAIT, waitArguments());
                        replies = c.getMany(2);
                    }
                    if (replies.get(0) instanceof JedisDataException d) {
                        throw d;
                    }
                    return new Replicated(replies.get(0), asLong(replies.get(1)));
                });
            }
        });
    }

    /** Runs {@code work} with the connection's read timeout raised by the {@code WAIT} timeout. */
    <T> T withWait(Connection c, Supplier<T> work) {
        int timeout = c.getSoTimeout();
        c.setSoTimeout((int) Math.min(
                Integer.MAX_VALUE, timeout + settings.waitReplicasTimeout().toMillis()));
        try {
            return work.get();
        } finally {
            if (!c.isBroken()) {
                c.setSoTimeout(timeout);
            }
        }
    }

    /** The arguments of {@code WAIT waitReplicas waitReplicasTimeoutMs}. */
    String[] waitArguments() {
        return new String[] {
            Integer.toString(settings.waitReplicas()),
            Long.toString(settings.waitReplicasTimeout().toMillis())
        };
    }

    private static String[] scriptArguments(String scriptOrSha, List<String> keys, List<String> args) {
        String[] a = new String[2 + keys.size() + args.size()];
        int i = 0;
        a[i++] = scriptOrSha;
        a[i++] = Integer.toString(keys.size());
        for (String k : keys) {
            a[i++] = k;
        }
        for (String v : args) {
            a[i++] = v;
        }
        return a;
    }

    /** The failure of {@code what} fewer replicas acknowledged than {@code waitReplicas}. */
    LockBackendException tooFewReplicas(String what, long acknowledged) {
        return new LockBackendException("Redis at " + settings.address() + ": only " + acknowledged + " of "
                + settings.waitReplicas() + " replicas acknowledged " + what + " within "
                + settings.waitReplicasTimeout().toMillis() + " ms (waitReplicas)");
    }

    /** "Redis at ADDRESS {@code what}: message", caused by {@code e}. */
    LockBackendException failure(String what, Exception e) {
        return RedisFailures.failure(settings.address(), what, e);
    }

    /**
     * On a Sentinel-managed master, asks the sentinels where the master is now (at most every 100 ms) and moves
     * the pools there; on other servers does nothing.
     *
     * @return whether a pool moved to another master
     */
    boolean followMaster() {
        boolean moved = commands.followMaster();
        if (waits != commands && waits.followMaster()) {
            moved = true;
        }
        return moved;
    }

    /**
     * The server closed a connection (CLIENT KILL, an idle timeout, a restart): the pool's idle connections are as
     * dead. Leases do not depend on connections: a lease that did not survive (a restart lost its hash) is refused
     * at its next renewal and reported lost then, so nothing is reported lost here.
     */
    private void connectionClosed(Throwable e) {
        LOG.log(
                System.Logger.Level.INFO,
                "Redis at " + settings.address() + " closed a connection of this lock client (" + e.getMessage()
                        + "); retrying on a fresh connection");
        commands.dropIdleConnections();
        if (waits != commands) {
            waits.dropIdleConnections();
        }
    }
}
