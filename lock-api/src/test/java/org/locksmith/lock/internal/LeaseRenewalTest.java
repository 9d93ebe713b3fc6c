package org.locksmith.lock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.MemoryBackend;

/** The renewal round's steps, called one by one so that a release can land between them. */
class LeaseRenewalTest {
    // Renewal scheduled far beyond the test, so that only the test's own calls renew.
    private final MemoryBackend backend = new MemoryBackend(
            EnumSet.of(LockFeature.REENTRANT, LockFeature.LEASE_EXPIRY, LockFeature.AUTO_RENEWAL),
            Duration.ofHours(3),
            Duration.ofHours(1));

    @Test
    void aLeaseReleasedAfterTheRoundChoseItIsNotRenewed() throws Exception {
        try (CoreLockClient client = (CoreLockClient) Locks.client(backend)) {
            LockLease lease = client.lock("k").acquire(Duration.ofSeconds(1));
            List<CoreLease> due = client.renewer().leasesDue();
            assertThat(due).containsExactly((CoreLease) lease);

            lease.release();
            client.renewer().renew(due);

            assertThat(backend.renewedAfterRelease)
                    .as("renewals of a lease already released")
                    .hasValue(0);
            assertThat(backend.renewCalls).hasValue(0);
            assertThat(backend.releaseCalls).hasValue(1);
        }
    }

    @Test
    void aLeaseHeldWhenLockedIsRenewed() throws Exception {
        try (CoreLockClient client = (CoreLockClient) Locks.client(backend)) {
            LockLease lease = client.lock("k").acquire(Duration.ofSeconds(1));
            client.renewer().renew(client.renewer().leasesDue());
            assertThat(backend.renewCalls).hasValue(1);
            assertThat(lease.isValid()).isTrue();
            lease.release();
        }
    }
}
