package org.locksmith.lock.tck.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.awaitility.Awaitility;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockException;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.tck.LockFaults;

/**
 * Contract 11, renewals lease by lease: one stalled lease does not take the others with it. A client's leases are
 * renewed (or their sessions checked) in rounds; a backend that asks about them one after another, or a core that
 * waits for one round before the next, lets one store connection that answers nothing (a stopped server process, a
 * silently cut connection) hold up every other lease's confirmation until their time runs out: they turn invalid,
 * their listeners fire and their keys go to other clients, though their own sessions never stopped answering.
 */
public final class IndependentRenewalContract {
    /** How many leases the client holds; one of them is stalled. */
    private static final int LEASES = 6;

    private final TckEnv env;

    public IndependentRenewalContract(TckEnv env) {
        this.env = env;
    }

    /**
     * C11.5: a client holds six detached leases and the store connection or session of the first one granted is
     * stalled ({@code STALL_LEASE}); for the longest time a lease is trusted without confirmation plus one operation
     * timeout (the time a stalled renewal can block), the other five stay valid, fire no loss, and no other client
     * can take their keys. Once the stall ends they release normally and their keys are free.
     */
    public void oneStalledLeaseSparesTheOthers() throws Exception {
        env.requireFeature(LockFeature.LOSS_DETECTION);
        if (env.has(LockFeature.LEASE_EXPIRY)) {
            // A lease that expires and is never renewed runs out within the window whatever the stall does.
            env.requireFeature(LockFeature.AUTO_RENEWAL);
        }
        env.requireFault(LockFaults.Fault.STALL_LEASE);
        LockClient a = env.client("A");
        LockClient b = env.client("B");
        Duration op = TckEnv.allow(env.timings().operationTimeout());
        List<String> keys = new ArrayList<>();
        List<LockLease> leases = new ArrayList<>();
        Map<String, String> lost = new ConcurrentHashMap<>();
        for (int i = 0; i < LEASES; i++) {
            String key = env.key("stall-" + i);
            LockLease lease = a.lock(key).acquireDetached(op);
            keys.add(key);
            leases.add(lease);
            if (i > 0) {
                lease.onLost(e -> lost.put(key, String.valueOf(e.getMessage())));
            }
        }
        String stalledKey = keys.get(0);
        // Configured times, not allowances: a backend whose renewals wait for the stalled one loses the others
        // within the trusted time plus the stalled call, and the check must keep watching at least that long.
        Duration window = trustedTime().plus(env.timings().operationTimeout());
        try {
            try (LockFaults.Outage stall = env.faults().stallLease(a, stalledKey)) {
                long start = System.nanoTime();
                Awaitility.await("c11 other leases while one lease is stalled")
                        .during(window)
                        .atMost(window.plus(TckEnv.allow(Duration.ofSeconds(2))))
                        .pollInterval(Duration.ofMillis(25))
                        .untilAsserted(() -> {
                            for (int i = 1; i < LEASES; i++) {
                                assertThat(leases.get(i).isValid())
                                        .as(env.at(a, keys.get(i))
                                                + "isValid() of a lease whose session answers, checked "
                                                + TckEnv.millisSince(start) + " ms after the store connection of"
                                                + " another lease of the same client ('" + stalledKey + "') stalled:"
                                                + " one stalled renewal must not run the others' time out")
                                        .isTrue();
                            }
                            assertThat(lost)
                                    .as(env.at(a, keys.get(1)) + "leases reported lost (key -> cause) while only the"
                                            + " connection of '" + stalledKey + "' was stalled")
                                    .isEmpty();
                        });
                for (int i = 1; i < LEASES; i++) {
                    Probes.assertNotGrantable(
                            env,
                            b,
                            keys.get(i),
                            "client A held it for " + TckEnv.millisSince(start) + " ms with a live session, and"
                                    + " only the store connection of its other lease '" + stalledKey
                                    + "' was stalled");
                }
            }
            for (int i = 1; i < LEASES; i++) {
                leases.get(i).release();
                Probes.assertGrantable(env, b, keys.get(i), "after client A released it, once the stall had ended");
            }
        } finally {
            for (LockLease lease : leases) {
                try {
                    if (lease.holdCount() > 0) {
                        lease.release();
                    }
                } catch (LockException | IllegalMonitorStateException ignored) {
                    // the stalled lease may have been lost meanwhile; the others were released above or failed
                }
            }
        }
    }

    /** How long the core trusts a lease without a confirmation: its lease time or session timeout, the longer. */
    private Duration trustedTime() {
        Duration lease = env.has(LockFeature.LEASE_EXPIRY) ? env.timings().leaseTime() : Duration.ZERO;
        Duration session = env.timings().sessionTimeout();
        return lease.compareTo(session) > 0 ? lease : session;
    }
}
