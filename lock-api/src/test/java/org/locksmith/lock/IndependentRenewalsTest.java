package org.locksmith.lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.LockBackend;

/**
 * One lease whose renewal hangs in the store costs no other lease its time: the core neither waits for a round
 * before it starts the next one, nor lets a backend that keeps the SPI's default renew (one lease after another)
 * hold the other leases behind the stalled one.
 */
class IndependentRenewalsTest {
    private static final Duration LEASE = Duration.ofMillis(600);
    private static final Duration RENEW_EVERY = Duration.ofMillis(100);

    /** A backend that renews its leases in parallel, but returns only when every renewal has ended. */
    @Test
    void aRoundWaitingForAStalledLeaseDelaysNoOtherLease() throws Exception {
        MemoryBackend backend = MemoryBackend.renewing(LEASE, RENEW_EVERY);
        backend.parallelRenewal = true;
        assertOthersStayValid(backend, backend);
    }

    /** A backend that keeps the default renew(): the core renews each lease in a call of its own. */
    @Test
    void theDefaultRenewalIsRunLeaseByLease() throws Exception {
        MemoryBackend backend = MemoryBackend.renewing(LEASE, RENEW_EVERY);
        assertOthersStayValid(backend, new DefaultRenewal(backend));
    }

    private static void assertOthersStayValid(MemoryBackend store, LockBackend backend) throws Exception {
        CountDownLatch resume = new CountDownLatch(1);
        CountDownLatch stalled = new CountDownLatch(1);
        store.renewKeyHook = key -> {
            if (key.equals("stalled")) {
                stalled.countDown();
                try {
                    resume.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        try (LockClient client = Locks.client(backend)) {
            LockLease stalledLease = client.lock("stalled").acquireDetached(Duration.ofSeconds(1));
            List<LockLease> others = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                others.add(client.lock("other-" + i).acquireDetached(Duration.ofSeconds(1)));
            }
            assertThat(stalled.await(5, TimeUnit.SECONDS)).isTrue();
            try {
                // Three lease times with one renewal stalled throughout.
                await().during(LEASE.multipliedBy(3))
                        .atMost(LEASE.multipliedBy(3).plusSeconds(2))
                        .pollInterval(Duration.ofMillis(20))
                        .untilAsserted(() -> {
                            for (LockLease lease : others) {
                                assertThat(lease.isValid())
                                        .as("lease of " + lease.key() + " while the renewal of 'stalled' hangs")
                                        .isTrue();
                            }
                        });
            } finally {
                resume.countDown();
            }
            for (LockLease lease : others) {
                lease.release();
            }
            try {
                stalledLease.release();
            } catch (LockLostException expected) {
                // its lease ran out while its renewal hung
            }
        }
    }

    /** Delegates everything but {@link LockBackend#renew(List, org.locksmith.lock.spi.RenewalReport)}. */
    private static final class DefaultRenewal implements LockBackend {
        private final LockBackend delegate;

        DefaultRenewal(LockBackend delegate) {
            this.delegate = delegate;
        }

        @Override
        public String name() {
            return delegate.name();
        }

        @Override
        public Set<LockFeature> features() {
            return delegate.features();
        }

        @Override
        public Duration leaseTime() {
            return delegate.leaseTime();
        }

        @Override
        public Duration renewInterval() {
            return delegate.renewInterval();
        }

        @Override
        public BackendLease acquire(AcquireRequest request) throws InterruptedException {
            return delegate.acquire(request);
        }

        @Override
        public void close() {
            delegate.close();
        }
    }
}
