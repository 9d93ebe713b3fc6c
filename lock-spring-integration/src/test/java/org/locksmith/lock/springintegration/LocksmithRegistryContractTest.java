package org.locksmith.lock.springintegration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.Locks;
import org.locksmith.lock.testservers.TestRedis;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;

/**
 * The registry contract on Locksmith's registry over Redis, two clients as two nodes (the short-expiry nodes are two
 * more clients with a lease time of {@link #SHORT_EXPIRY}).
 */
class LocksmithRegistryContractTest extends LockRegistryContract {
    private static LockClient clientA;
    private static LockClient clientB;
    private static LocksmithLockRegistry a;
    private static LocksmithLockRegistry b;
    private static LockClient shortClientA;
    private static LockClient shortClientB;
    private static LocksmithLockRegistry shortA;
    private static LocksmithLockRegistry shortB;

    @BeforeAll
    static void open() {
        String url = TestRedis.sharedUrl() + "?leaseMs=5000&restartHoldOffMs=0&prefix=locksmith-si-contract:";
        clientA = Locks.open(url);
        clientB = Locks.open(url);
        a = new LocksmithLockRegistry(clientA);
        b = new LocksmithLockRegistry(clientB);
        String shortUrl = TestRedis.sharedUrl() + "?leaseMs=" + SHORT_EXPIRY.toMillis()
                + "&restartHoldOffMs=0&prefix=locksmith-si-contract:";
        shortClientA = Locks.open(shortUrl);
        shortClientB = Locks.open(shortUrl);
        shortA = new LocksmithLockRegistry(shortClientA);
        shortB = new LocksmithLockRegistry(shortClientB);
    }

    @AfterAll
    static void close() {
        clientA.close();
        clientB.close();
        shortClientA.close();
        shortClientB.close();
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
        return IllegalMonitorStateException.class;
    }

    @Override
    Class<? extends Throwable> unlockAfterExpiryException() {
        return LockLostException.class;
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
        return true;
    }
}
