package org.locksmith.lock.zookeeper;

import java.time.Duration;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;

/**
 * A separate JVM that acquires one key, prints {@code HELD <token>} and then holds it until it is killed; the
 * fault test kills it with SIGKILL so that nothing is released cleanly.
 */
public final class HolderProcess {
    private HolderProcess() {}

    public static void main(String[] args) throws Exception {
        LockClient client = Locks.open(args[0]);
        LockLease lease = client.lock(args[1]).acquire(Duration.ofSeconds(30));
        System.out.println("HELD " + lease.fencingToken());
        System.out.flush();
        // Block until killed; reading stdin ends if the parent test JVM goes away, so no orphan stays behind.
        while (System.in.read() >= 0) {
            // keep holding
        }
        System.exit(0);
    }
}
