package org.locksmith.lock.redis.internal;

import java.util.Map;
import org.locksmith.lock.LockBackendException;
import redis.clients.jedis.Connection;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.util.Pool;

/**
 * Looks, when a backend opens, at {@code maxmemory} and {@code maxmemory-policy} on every server that holds locks
 * (each master of a cluster): with a memory limit, any policy but {@code noeviction} may evict a held lock's hash
 * (each has an expiry, so {@code volatile-*} policies take it as readily as {@code allkeys-*}), which frees the lock
 * for another owner while its holder's lease looks valid until its next renewal. What it then does is its {@link
 * Mode}: the public {@code RedisLocks.EvictionCheck} and the URL's {@code evictionCheck} map onto it.
 */
public final class EvictionGuard {
    private static final System.Logger LOG = System.getLogger("org.locksmith.lock.redis");

    /** What opening a client does when Redis may evict lock keys. */
    public enum Mode {
        /** Log a warning naming the setting. */
        WARN,
        /** Refuse to open, with a {@link LockBackendException} naming the setting. */
        REFUSE,
        /** Do not look. */
        IGNORE
    }

    private EvictionGuard() {}

    /**
     * Checks every node of {@code commands}, warning or refusing as {@code mode} says.
     *
     * @throws LockBackendException with {@link Mode#REFUSE}, if a server may evict lock keys or does not say
     */
    static void check(RedisTopology commands, String address, Mode mode) {
        if (mode == Mode.IGNORE) {
            return;
        }
        for (Map.Entry<String, Pool<Connection>> node :
                commands.nodePools(address).entrySet()) {
            Map<String, String> config;
            try (Connection connection = node.getValue().getResource()) {
                config = new Jedis(connection).configGet("maxmemory*");
            } catch (JedisException e) {
                String why = "Could not check whether Redis at " + node.getKey() + " may evict lock keys (CONFIG GET"
                        + " maxmemory*: " + e.getMessage() + "); set " + RedisSettings.EVICTION_CHECK
                        + "=ignore if its eviction policy is known to be noeviction";
                if (mode == Mode.REFUSE) {
                    throw new LockBackendException(why, e);
                }
                LOG.log(System.Logger.Level.WARNING, why);
                continue;
            }
            String maxmemory = config.getOrDefault("maxmemory", "0");
            String policy = config.getOrDefault("maxmemory-policy", "noeviction");
            if (maxmemory.equals("0") || policy.equals("noeviction")) {
                continue;
            }
            String why = "Redis at " + node.getKey() + " may evict lock keys (maxmemory " + maxmemory
                    + ", maxmemory-policy " + policy + "): an evicted lock is free for another owner while its holder"
                    + " still sees isValid() true until its next renewal. Set maxmemory-policy noeviction (or"
                    + " maxmemory 0) on the servers that hold locks, or open with " + RedisSettings.EVICTION_CHECK
                    + "=ignore";
            if (mode == Mode.REFUSE) {
                throw new LockBackendException(why);
            }
            LOG.log(System.Logger.Level.WARNING, why);
        }
    }
}
