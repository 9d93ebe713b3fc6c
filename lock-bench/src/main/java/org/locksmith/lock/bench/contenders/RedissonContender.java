package org.locksmith.lock.bench.contenders;

import java.time.Duration;
import org.locksmith.lock.bench.Contender;
import org.locksmith.lock.bench.Scenario;
import org.locksmith.lock.bench.StoreKind;
import org.locksmith.lock.bench.Stores;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Redisson's {@code RLock} (or its fair lock) with Redisson's defaults: lock without a lease time, so its watchdog
 * renews the lock (every third of {@code lockWatchdogTimeout}, 30 s by default; in S6 the scenario's lease).
 */
public final class RedissonContender extends Peer {
    private final boolean fair;

    private RedissonContender(boolean fair) {
        super(fair ? "redisson-fair" : "redisson-rlock", StoreKind.REDIS);
        this.fair = fair;
    }

    public static Contender rlock() {
        return new RedissonContender(false);
    }

    public static Contender fairLock() {
        return new RedissonContender(true);
    }

    @Override
    public String description() {
        return "Redisson " + Redisson.class.getPackage().getImplementationVersion() + " "
                + (fair ? "getFairLock" : "getLock") + " (RLock), watchdog renewal, default pools";
    }

    @Override
    public String notApplicable(Scenario scenario) {
        if (fair && scenario == Scenario.S6) {
            return "renews exactly as redisson-rlock (the same watchdog); left out to keep the run short";
        }
        return null;
    }

    @Override
    public Client open(Stores stores, Duration lease) {
        Config config = new Config();
        var server = config.useSingleServer()
                .setAddress("redis://" + stores.redisHost() + ":" + stores.redisPort())
                .setDatabase(stores.redisDatabase());
        if (stores.redisPassword() != null) {
            server.setPassword(stores.redisPassword());
            if (stores.redisUser() != null) {
                server.setUsername(stores.redisUser());
            }
        }
        if (lease != null) {
            config.setLockWatchdogTimeout(lease.toMillis());
        }
        RedissonClient redisson = Redisson.create(config);
        String prefix = "lsbench:" + stores.runId() + ":" + name() + ":";
        return new Client() {
            @Override
            public Handle handle(String key) {
                return new JucLockHandle(
                        name(), key, fair ? redisson.getFairLock(prefix + key) : redisson.getLock(prefix + key));
            }

            @Override
            public void close() {
                redisson.shutdown();
            }
        };
    }
}
