package org.locksmith.lock.mysql.internal;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
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

    /**
     * Checks every held session at once, each on its own connection (all but one on the backend's daemon threads),
     * reporting each as soon as it answered: a stalled session or shard costs its own leases the timeout and delays
     * no other lease's check.
     */
    @Override
    final void renew(StrategyContext context, List<BackendLease> leases, RenewalReport report) {
        context.inParallel(leases, l -> checkSession((SessionLease) l, report));
    }

    private static void checkSession(SessionLease lease, RenewalReport report) {
        long sentAt = System.nanoTime();
        boolean alive;
        try {
            alive = lease.renew();
        } catch (RuntimeException e) {
            report.unconfirmed(lease, e);
            return;
        }
        if (alive) {
            if (lease.confirmed(sentAt)) {
                report.renewed(lease, sentAt);
            } else {
                report.lost(
                        lease,
                        "its connection to " + lease.shard + " was given back, as no check had confirmed it"
                                + " within the session timeout: the server may have freed the lock");
            }
            return;
        }
        report.lost(lease, "its session on " + lease.shard + " ended or no longer holds the lock");
        // Only now that the core has marked it lost (report.lost does so before returning) may the server free it.
        lease.giveBackLost();
    }
}
