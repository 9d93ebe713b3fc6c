package org.locksmith.lock.shedlock;

import java.util.UUID;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;
import org.locksmith.lock.testservers.TestMySql;
import org.locksmith.lock.testservers.TestRedis;

/** The real stores these tests run against, found by lock-test-servers; each run isolates itself by key prefix. */
enum TestStores {
    REDIS {
        @Override
        LockClient open() {
            return Locks.open(TestRedis.sharedUrl() + "?leaseMs=2000&prefix=locksmith-shedlock-test:");
        }
    },
    MYSQL {
        @Override
        LockClient open() {
            return Locks.open(TestMySql.baseUrl() + "?table=locksmith_shedlock_test&checkIntervalMs=500");
        }
    };

    /** A new client of this store; two clients are two nodes. */
    abstract LockClient open();

    /** A prefix of ShedLock lock names no other run uses, so that runs sharing a server never meet. */
    static String uniquePrefix() {
        return "shedlock-test-" + UUID.randomUUID() + ":";
    }
}
