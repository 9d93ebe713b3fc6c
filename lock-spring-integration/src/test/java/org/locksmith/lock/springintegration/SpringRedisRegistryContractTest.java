package org.locksmith.lock.springintegration;

import java.net.URI;
import java.util.ConcurrentModificationException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.locksmith.lock.testservers.TestRedis;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;

/**
 * The registry contract on Spring's own RedisLockRegistry (Lettuce), two connection factories as two nodes (the
 * short-expiry nodes are registries with an {@code expireAfter} of {@link #SHORT_EXPIRY} on the same factories).
 */
class SpringRedisRegistryContractTest extends LockRegistryContract {
    private static LettuceConnectionFactory factoryA;
    private static LettuceConnectionFactory factoryB;
    private static RedisLockRegistry a;
    private static RedisLockRegistry b;
    private static RedisLockRegistry shortA;
    private static RedisLockRegistry shortB;

    @BeforeAll
    static void open() {
        // NIO, not epoll: the test class path has the Netty epoll transport of another 4.x line than Lettuce's
        System.setProperty("io.lettuce.core.epoll", "false");
        URI url = URI.create(TestRedis.sharedUrl());
        factoryA = factory(url);
        factoryB = factory(url);
        a = new RedisLockRegistry(factoryA, "locksmith-si-contract-spring");
        b = new RedisLockRegistry(factoryB, "locksmith-si-contract-spring");
        shortA = new RedisLockRegistry(factoryA, "locksmith-si-contract-spring", SHORT_EXPIRY.toMillis());
        shortB = new RedisLockRegistry(factoryB, "locksmith-si-contract-spring", SHORT_EXPIRY.toMillis());
    }

    private static LettuceConnectionFactory factory(URI url) {
        LettuceConnectionFactory factory =
                new LettuceConnectionFactory(new RedisStandaloneConfiguration(url.getHost(), url.getPort()));
        factory.afterPropertiesSet();
        factory.start();
        return factory;
    }

    @AfterAll
    static void close() {
        a.destroy();
        b.destroy();
        shortA.destroy();
        shortB.destroy();
        factoryA.destroy();
        factoryB.destroy();
    }

    @Override
    ExpirableLockRegistry<? extends DistributedLock> nodeA() {
        return a;
    }

    @Override
    ExpirableLockRegistry<? extends DistributedLock> nodeB() {
        return b;
    }

    @Override
    Class<? extends Throwable> nonOwnerUnlockException() {
        return IllegalStateException.class;
    }

    @Override
    Class<? extends Throwable> unlockAfterExpiryException() {
        return ConcurrentModificationException.class;
    }

    @Override
    ExpirableLockRegistry<? extends DistributedLock> shortExpiryNodeA() {
        return shortA;
    }

    @Override
    ExpirableLockRegistry<? extends DistributedLock> shortExpiryNodeB() {
        return shortB;
    }

    @Override
    boolean renewsALockTakenWithoutATtl() {
        return false;
    }
}
