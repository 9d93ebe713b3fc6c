package org.locksmith.lock.zookeeper;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;

/**
 * A separate JVM that acquires one key, prints {@code HELD <token>}, then every 2 ms reads the wall clock and, if its
 * lease is still valid after that read, prints {@code VALID <epoch micros>}: each line is a moment at which this
 * process believed it held the key. The pause test stops it with SIGSTOP past its session and continues it;
 * {@code LOST <why>} comes from its loss listener.
 */
public final class ValidityReportingHolder {
    private ValidityReportingHolder() {}

    public static void main(String[] args) throws Exception {
        LockClient client = Locks.open(args[0]);
        LockLease lease = client.lock(args[1]).acquire(Duration.ofSeconds(30));
        lease.onLost(e -> {
            System.out.println("LOST " + e.getMessage());
            System.out.flush();
        });
        System.out.println("HELD " + lease.fencingToken());
        System.out.flush();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() - deadline < 0) {
            // The clock first, then the check: a true answer proves the belief at that instant or later.
            long now = ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
            if (lease.isValid()) {
                System.out.println("VALID " + now);
                System.out.flush();
            }
            Thread.sleep(2);
        }
        System.exit(0);
    }
}
