package org.locksmith.lock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.LockBackend;
import org.locksmith.lock.spi.RenewalReport;

/**
 * The heap the core keeps per held lease: a client holding many locks (a scheduler, a partition owner) must not
 * pay kilobytes for each. Measured as the growth of the used heap after full collections while 20,000 leases are
 * held through a backend whose own lease is a few bytes, configured as a renewing leased store (an expiry timer per
 * lease, as Redis and MySQL lease mode have).
 */
class CoreFootprintTest {
    private static final int LEASES = 20_000;
    /** The target of the core issue: core objects per held lease. */
    private static final long MAX_BYTES_PER_LEASE = 600;

    /** A store that always grants and keeps nothing but a token; its leases keep the request, as real ones do. */
    private static final class TinyBackend implements LockBackend {
        private final AtomicLong tokens = new AtomicLong();

        @Override
        public String name() {
            return "tiny";
        }

        @Override
        public Set<LockFeature> features() {
            return EnumSet.of(
                    LockFeature.REENTRANT,
                    LockFeature.FENCING,
                    LockFeature.LEASE_EXPIRY,
                    LockFeature.AUTO_RENEWAL,
                    LockFeature.LOSS_DETECTION);
        }

        @Override
        public Duration leaseTime() {
            return Duration.ofMinutes(10);
        }

        @Override
        public Duration renewInterval() {
            return Duration.ofMinutes(3);
        }

        @Override
        public BackendLease acquire(AcquireRequest request) {
            return new TinyLease(request, tokens.incrementAndGet(), System.nanoTime());
        }

        @Override
        public void renew(List<BackendLease> leases, RenewalReport report) {
            long now = System.nanoTime();
            leases.forEach(l -> report.renewed(l, now));
        }

        @Override
        public void close() {}
    }

    private record TinyLease(AcquireRequest request, long fencingToken, long confirmedAtNanos) implements BackendLease {
        @Override
        public boolean release() {
            return true;
        }
    }

    @Test
    void heapPerHeldLeaseStaysUnder600Bytes() throws Exception {
        List<String> keys = new ArrayList<>(LEASES);
        for (int i = 0; i < LEASES; i++) {
            keys.add("footprint-" + i);
        }
        List<LockLease> held = new ArrayList<>(LEASES);
        try (LockClient client = Locks.client(new TinyBackend())) {
            client.lock("warm-up").acquire(Duration.ofSeconds(1)).release();
            long before = usedHeapAfterGc();
            for (String key : keys) {
                held.add(client.lock(key).acquire(Duration.ofSeconds(1)));
            }
            long after = usedHeapAfterGc();
            // The backend's own lease (a record of three fields, 32 bytes) is not the core's.
            long perLease = (after - before) / LEASES - 32;
            System.out.println("core heap per held lease: " + perLease + " B (" + LEASES + " leases)");
            assertThat(perLease).as("bytes of core objects per held lease").isLessThan(MAX_BYTES_PER_LEASE);
            held.forEach(LockLease::release);
        }
    }

    private static long usedHeapAfterGc() throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            System.gc();
            Thread.sleep(50);
            Runtime runtime = Runtime.getRuntime();
            used = Math.min(used, runtime.totalMemory() - runtime.freeMemory());
        }
        return used;
    }
}
