package org.locksmith.lock.mysql.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.mysql.MySqlStrategy;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.RenewalReport;

/**
 * The strategies whose locks live as long as a server session ({@code row}, {@code named}): each lock holds a
 * connection of its own, the server queues waiters and frees a dead client's locks when it ends its session, and
 * renewal is a check, every check interval, that each holding session is alive and still holds its lock. The core
 * trusts a held lease for the session timeout (the {@code wait_timeout} set on every lock connection).
 */
abstract sealed class SessionLocks extends Strategy permits RowLocks, NamedLocks {
    private final Set<LockFeature> features = EnumSet.of(
            LockFeature.REENTRANT,
            LockFeature.FENCING,
            LockFeature.DURABLE_FENCING,
            LockFeature.SESSION_BOUND,
            LockFeature.BLOCKING_WAKEUP,
            LockFeature.LOSS_DETECTION);

    SessionLocks(MySqlStrategy kind) {
        super(kind);
    }

    @Override
    final Set<LockFeature> features() {
        return features;
    }

    @Override
    final Duration leaseTime() {
        return Duration.ZERO;
    }

    @Override
    final Duration renewInterval(MySqlSettings settings) {
        return settings.checkInterval();
    }

    @Override
    final Duration sessionTimeout(MySqlSettings settings) {
        return settings.sessionTimeout();
    }

    @Override
    final String poolRole() {
        return "lock";
    }

    @Override
    final void renew(MySqlLockBackend backend, List<BackendLease> leases, RenewalReport report) {
        Map<Shard, List<SessionLease>> byShard = new LinkedHashMap<>();
        for (BackendLease l : leases) {
            SessionLease lease = (SessionLease) l;
            byShard.computeIfAbsent(lease.shard, s -> new ArrayList<>()).add(lease);
        }
        backend.perShard(byShard, (shard, held) -> checkSessions(backend, shard, held, report));
    }

    /**
     * Checks the held sessions of one shard, one after another (each on its own connection). A check that used up
     * {@code timeoutMs} and failed means the server or the network is stalled: the shard's remaining leases are
     * reported unconfirmed for this round instead of costing {@code timeoutMs} each, so a round lasts about one
     * timeout whatever the number of leases; the next round asks again.
     */
    private static void checkSessions(
            MySqlLockBackend backend, Shard shard, List<SessionLease> held, RenewalReport report) {
        long stallNanos = backend.timeoutNanos() * 9 / 10;
        LockBackendException stalled = null;
        for (SessionLease lease : held) {
            if (stalled != null) {
                report.unconfirmed(lease, stalled);
                continue;
            }
            long sentAt = System.nanoTime();
            boolean alive;
            try {
                alive = lease.renew();
            } catch (RuntimeException e) {
                report.unconfirmed(lease, e);
                continue;
            }
            if (alive) {
                if (lease.confirmed(sentAt)) {
                    report.renewed(lease, sentAt);
                } else {
                    report.lost(
                            lease,
                            "its connection to " + shard + " was given back, as no check had confirmed it"
                                    + " within the session timeout: the server may have freed the lock");
                }
                continue;
            }
            report.lost(lease, "its session on " + shard + " ended or no longer holds the lock");
            // Only now that the core has marked it lost (report.lost does so before returning) may the server free it.
            lease.giveBackLost();
            if (System.nanoTime() - sentAt >= stallNanos) {
                stalled = new LockBackendException("a session check on " + shard + " took timeoutMs ("
                        + backend.settings().timeout().toMillis()
                        + " ms) and failed: the server or the network is stalled");
            }
        }
    }
}
