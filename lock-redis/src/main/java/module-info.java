/**
 * Locksmith's Redis backend: Lua hash locks with {@code BLPOP} wake-ups, on Jedis. Standalone Redis and Redis
 * Cluster. Public: {@link org.locksmith.lock.redis.RedisLocks} and {@link org.locksmith.lock.redis.RedisLockProvider};
 * everything else is internal.
 *
 * <p>Jedis and commons-pool2 are automatic modules (they carry an {@code Automatic-Module-Name}); Jedis is required
 * transitively because {@code RedisLocks.using(UnifiedJedis)} takes a Jedis type.
 */
@SuppressWarnings({"requires-transitive-automatic", "requires-automatic"})
module org.locksmith.lock.redis {
    requires transitive org.locksmith.lock;
    requires transitive redis.clients.jedis;
    requires org.apache.commons.pool2;

    exports org.locksmith.lock.redis;

    provides org.locksmith.lock.spi.LockProvider with
            org.locksmith.lock.redis.RedisLockProvider;
}
