package org.locksmith.lock.bench.contenders;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.locksmith.lock.bench.StoreKind;
import org.locksmith.lock.bench.Stores;
import org.springframework.data.redis.connection.RedisPassword;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * Spring Integration's {@code RedisLockRegistry} on Lettuce, in its {@code PUB_SUB_LOCK} mode (woken by a message
 * on release rather than its default 100 ms spin), with its renewal scheduler so that a held lock outlives its
 * expiry (60 s by default; in S6 the scenario's lease). The renewal scheduler gets four threads: Spring renews each
 * lock with its own scheduled task, and one thread (the scheduler's default) cannot keep S6's 10,000 leases alive.
 */
public final class SpringRedisContender extends Peer {

    public SpringRedisContender() {
        super("spring-redis", StoreKind.REDIS);
    }

    @Override
    public String description() {
        return "Spring Integration " + RedisLockRegistry.class.getPackage().getImplementationVersion()
                + " RedisLockRegistry (PUB_SUB_LOCK, Lettuce, renewal scheduler)";
    }

    @Override
    public Client open(Stores stores, Duration lease) {
        RedisStandaloneConfiguration server = new RedisStandaloneConfiguration(stores.redisHost(), stores.redisPort());
        server.setDatabase(stores.redisDatabase());
        if (stores.redisPassword() != null) {
            server.setPassword(RedisPassword.of(stores.redisPassword()));
            server.setUsername(stores.redisUser());
        }
        LettuceConnectionFactory factory = new LettuceConnectionFactory(server);
        factory.afterPropertiesSet();
        factory.start();
        ThreadPoolTaskScheduler renewals = new ThreadPoolTaskScheduler();
        renewals.setThreadNamePrefix("spring-redis-renewal-");
        renewals.setDaemon(true);
        renewals.setPoolSize(4);
        renewals.initialize();
        RedisLockRegistry registry = lease == null
                ? new RedisLockRegistry(factory, "lsbench:" + stores.runId() + ":spring")
                : new RedisLockRegistry(factory, "lsbench:" + stores.runId() + ":spring", lease);
        registry.setRedisLockType(RedisLockRegistry.RedisLockType.PUB_SUB_LOCK);
        registry.setRenewalTaskScheduler(renewals);
        AtomicBoolean staleReported = new AtomicBoolean();
        return new Client() {
            @Override
            public Handle handle(String key) {
                return new JucLockHandle(
                        name(), key, () -> registry.obtain(key), SpringRegistries::evictedFromCache, staleReported);
            }

            @Override
            public void close() {
                registry.destroy();
                renewals.shutdown();
                factory.destroy();
            }
        };
    }
}
