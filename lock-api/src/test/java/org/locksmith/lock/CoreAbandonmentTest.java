package org.locksmith.lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.spi.Abandonment;

/** The test kits' abandon hook: renewals stop for good, and an abandoned client closes without releasing. */
class CoreAbandonmentTest {

    @Test
    void stoppedRenewalsLetTheLeaseRunOutWhileReleasesStillReachTheStore() throws Exception {
        MemoryBackend backend = MemoryBackend.renewing(Duration.ofMillis(300), Duration.ofMillis(50));
        try (LockClient client = Locks.client(backend)) {
            LockLease lease = client.lock("k").acquire(Duration.ofSeconds(5));
            assertThat(Abandonment.stopRenewals(client)).isTrue();
            int renewals = backend.renewCalls.get();
            Awaitility.await().atMost(Duration.ofSeconds(3)).until(() -> !lease.isValid());
            assertThat(backend.renewCalls.get())
                    .as("renewals after stopRenewals")
                    .isEqualTo(renewals);
            assertThatThrownBy(lease::release).isInstanceOf(LockLostException.class);
            assertThat(backend.releaseCalls.get())
                    .as("the late release reached the backend")
                    .isEqualTo(1);
        }
    }

    @Test
    void anAbandonedClientClosesItsBackendWithoutReleasing() throws Exception {
        MemoryBackend backend = MemoryBackend.renewing(Duration.ofMillis(300), Duration.ofMillis(50));
        LockClient client = Locks.client(backend);
        LockLease lease = client.lock("k").acquire(Duration.ofSeconds(5));
        assertThat(Abandonment.abandon(client)).isTrue();
        assertThat(backend.closeCalls.get()).isEqualTo(1);
        assertThat(backend.releaseCalls.get()).as("releases by abandon").isZero();
        assertThat(backend.heldAtClose).containsExactly("k");
        assertThat(lease.isValid())
                .as("the lease keeps its clock until it runs out")
                .isTrue();
        Awaitility.await().atMost(Duration.ofSeconds(3)).until(() -> !lease.isValid());
        assertThatThrownBy(() -> client.lock("k")).isInstanceOf(IllegalStateException.class);
        client.close();
        assertThat(backend.closeCalls.get())
                .as("close after abandon is a no-op")
                .isEqualTo(1);
    }
}
