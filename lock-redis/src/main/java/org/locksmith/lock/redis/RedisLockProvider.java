package org.locksmith.lock.redis;

import java.util.Optional;
import java.util.Set;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.redis.internal.RedisConnections;
import org.locksmith.lock.redis.internal.RedisSettings;
import org.locksmith.lock.spi.LockBackend;
import org.locksmith.lock.spi.LockProvider;
import org.locksmith.lock.spi.LockUrl;
import redis.clients.jedis.UnifiedJedis;

/**
 * Opens Redis lock clients for {@code redis://} and {@code rediss://} (TLS) URLs; found by {@link
 * org.locksmith.lock.Locks#open(String)} through {@link java.util.ServiceLoader}.
 *
 * <p>URL: {@code redis[s]://[user[:password]@]host[:port][,host[:port]...][/database][?name=value&...]}. Several
 * hosts, or {@code cluster=true}, mean Redis Cluster (the hosts are seed nodes); with {@code sentinelMaster=name}
 * the hosts are sentinels (default port 26379) and the client follows the master they name. Parameters, with their
 * defaults:
 *
 * <ul>
 *   <li>{@code leaseMs=30000} how long Redis keeps a lease without renewal (100 ms to 1 day); renewed every third
 *   <li>{@code prefix=locksmith:} prefix of every key written (no braces)
 *   <li>{@code connectTimeoutMs=2000}, {@code timeoutMs=2000} connect and command timeouts: a down server fails an
 *       operation with {@link org.locksmith.lock.LockBackendException} within them
 *   <li>{@code poolSize=8} connections for short commands (acquire, release, renew)
 *   <li>{@code waitPoolSize=16} connections for blocking waits: how many threads may wait in {@code BLPOP} at once;
 *       more waiters queue locally
 *   <li>{@code database=0} (or the path {@code /0}); {@code clientName=locksmith} (shown by {@code CLIENT LIST})
 *   <li>{@code cluster=false} unless several hosts are given
 *   <li>{@code sentinelMaster} (none) the name of a Sentinel-managed master; the hosts are then sentinels
 *   <li>{@code evictionCheck=warn} what opening does if a server may evict lock keys ({@code maxmemory} set and
 *       {@code maxmemory-policy} not {@code noeviction}): {@code warn}, {@code refuse} or {@code ignore}
 *   <li>{@code restartHoldOffMs} (default: {@code leaseMs}) how long after a server starts it grants no lock, so
 *       that a server restarted without its data cannot grant a lock whose earlier holder still believes it holds;
 *       set it to the longest lease of any client, or 0 if every write survives a restart ({@code appendfsync always})
 * </ul>
 *
 * Unknown parameters are rejected. {@link #open} pings the server, so a wrong port, host or password fails at once
 * with a {@link org.locksmith.lock.LockBackendException} naming the address.
 *
 * <p>On an application's {@link UnifiedJedis} ({@link #openClient}, as {@link RedisLocks#builder()} does), the lock
 * settings {@code leaseMs}, {@code prefix}, {@code restartHoldOffMs}, {@code evictionCheck}, {@code waitPoolSize}
 * (the most threads blocked in {@code BLPOP} at once), {@code waitReplicas} and {@code waitReplicasTimeoutMs} apply;
 * the others configure connections, which the application's client makes.
 */
public final class RedisLockProvider implements LockProvider {

    /** Public no-argument constructor for {@link java.util.ServiceLoader}; does no I/O. */
    public RedisLockProvider() {}

    @Override
    public String name() {
        return "redis";
    }

    @Override
    public Set<String> schemes() {
        return Set.of("redis", "rediss");
    }

    @Override
    public String defaultUrl() {
        return "redis://127.0.0.1:6379";
    }

    @Override
    public Set<String> parameters() {
        return RedisConnections.PARAMETERS;
    }

    @Override
    public LockBackend open(LockUrl url) {
        if (!schemes().contains(url.scheme())) {
            throw new IllegalArgumentException("RedisLockProvider opens redis:// and rediss:// URLs, not " + url);
        }
        return RedisConnections.open(url);
    }

    /** {@link UnifiedJedis}. */
    @Override
    public Optional<Class<?>> applicationConnectionType() {
        return Optional.of(UnifiedJedis.class);
    }

    @Override
    public Set<String> applicationConnectionParameters() {
        return RedisSettings.LOCK_PARAMETERS;
    }

    /**
     * {@link RedisLocks#builder()} with the URL's lock settings (same defaults and ranges as {@link #open}), built on
     * {@code connection}, a {@link UnifiedJedis} that the client does not close. Checks that the server answers.
     *
     * @throws IllegalArgumentException if a setting is invalid (before any I/O)
     * @throws org.locksmith.lock.LockBackendException if the server does not answer
     */
    @Override
    public LockClient openClient(LockUrl url, Object connection) {
        UnifiedJedis jedis = (UnifiedJedis) connection;
        RedisSettings settings = RedisSettings.from(url, "the application's UnifiedJedis");
        RedisLocks.EvictionCheck evictionCheck = RedisLocks.EvictionCheck.valueOf(
                RedisSettings.evictionCheck(url).name());
        return RedisLocks.builder()
                .leaseTime(settings.leaseTime())
                .prefix(settings.prefix())
                .restartHoldOff(settings.restartHoldOff())
                .evictionCheck(evictionCheck)
                .maxBlockingWaiters(settings.maxBlockingWaiters())
                .waitForReplicas(settings.waitReplicas(), settings.waitReplicasTimeout())
                .address(settings.address())
                .build(jedis);
    }
}
