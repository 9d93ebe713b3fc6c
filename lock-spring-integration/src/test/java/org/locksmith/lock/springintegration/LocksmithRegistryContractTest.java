package org.locksmith.lock.springintegration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;
import org.locksmith.lock.testservers.TestRedis;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;

/** The registry contract on Locksmith's registry over Redis, two clients as two nodes. */
class LocksmithRegistryContractTest extends LockRegistryContract {
    private static LockClient clientA;
    private static LockClient clientB;
    private static LocksmithLockRegistry a;
    private static LocksmithLockRegistry b;

    @BeforeAll
    static void open() {
        String url = TestRedis.sharedUrl() + "?leaseMs=5000&restartHoldOffMs=0&prefix=locksmith-si-contract:";
        clientA = Locks.open(url);
        clientB = Locks.open(url);
        a = new LocksmithLockRegistry(clientA);
        b = new LocksmithLockRegistry(clientB);
    }

    @AfterAll
    static void close() {
        clientA.close();
        clientB.close();
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
}
