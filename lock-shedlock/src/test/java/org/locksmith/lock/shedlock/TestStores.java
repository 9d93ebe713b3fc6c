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
            return Locks.open(TestRedis.sharedLockUrl("leaseMs=2000&prefix=locksmith-shedlock-test:"));
        }
    },
    MYSQL {
        /**
         * The row strategy holds one lock connection per held lock and per attempt in progress, and a try with all of
         * them in use returns empty rather than wait; ShedLock's tests run four at a time here, its fuzz test with
         * eight threads, so the pool is sized for that (the default, 10, makes an attempt come back empty now and
         * then).
         */
        @Override
        LockClient open() {
            return Locks.open(TestMySql.baseUrl() + "?table=locksmith_shedlock_test&checkIntervalMs=500&poolSize=24");
        }
    };

    /** A new client of this store; two clients are two nodes. */
    abstract LockClient open();

    /** A prefix of ShedLock lock names no other run uses, so that runs sharing a server never meet. */
    static String uniquePrefix() {
        return "shedlock-test-" + UUID.randomUUID() + ":";
    }
}
