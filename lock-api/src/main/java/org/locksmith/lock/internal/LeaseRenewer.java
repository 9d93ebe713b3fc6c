package org.locksmith.lock.internal;

import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.LockBackend;
import org.locksmith.lock.spi.RenewalReport;

/**
 * Renews one client's held leases in rounds, every {@link LockBackend#renewInterval()}, started by a daemon thread
 * of its own ({@code locksmith-renewer-N}). A round is store I/O and may block up to the store's timeout, so the
 * rounds run on daemon workers ({@code locksmith-renewal-N}), and the watch over waiting threads and the expiry
 * timers live on the client's watchdog: a slow store neither delays a waiter's cancellation nor is delayed by it.
 *
 * <p>Renewals are independent, lease by lease: a round never waits for an earlier one. A lease whose renewal is still
 * in flight (its session or node stalled) is left out of later rounds until its outcome is reported, and every other
 * lease is renewed at its pace meanwhile, so one stalled lease cannot run the others' time out. A backend that keeps
 * the SPI's default {@link LockBackend#renew} (one lease after another) has each lease renewed in a call of its
 * own, all at once; a backend that overrides it renews its batch as it sees fit (pipelined, per node, per shard).
 */
final class LeaseRenewer {
    private final CoreLockClient client;
    private final LockBackend backend;
    private final Collection<CoreLease> held;
    private final ScheduledThreadPoolExecutor thread;
    /** Runs the rounds' backend calls; a thread per call in flight, ended when idle. */
    private final ThreadPoolExecutor workers;
    /** Whether the backend keeps the SPI's default renew(), one lease after another: then each lease is a call. */
    private final boolean perLease;
    /**
     * A lease whose time runs out within this many nanoseconds (two rounds) gets an expiry timer on the watchdog, so
     * that its listeners hear of the loss at its valid-until time even if the rounds that would have noticed it are
     * late. A lease that renewals keep confirming never comes this close and never needs one.
     */
    private final long timerHorizonNanos;

    /** @param held a live view of the client's held leases */
    LeaseRenewer(CoreLockClient client, LockBackend backend, Collection<CoreLease> held, long everyNanos) {
        this.client = client;
        this.backend = backend;
        this.held = held;
        this.timerHorizonNanos = 2 * everyNanos;
        this.perLease = usesDefaultRenew(backend);
        this.workers = new ThreadPoolExecutor(
                0, Integer.MAX_VALUE, 5, TimeUnit.SECONDS, new SynchronousQueue<>(), new DaemonThreads("renewal"));
        this.thread = new ScheduledThreadPoolExecutor(1, new DaemonThreads("renewer"));
        thread.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        thread.scheduleWithFixedDelay(this::renewAll, everyNanos, everyNanos, TimeUnit.NANOSECONDS);
    }

    private static boolean usesDefaultRenew(LockBackend backend) {
        try {
            return backend.getClass()
                            .getMethod("renew", List.class, RenewalReport.class)
                            .getDeclaringClass()
                    == LockBackend.class;
        } catch (NoSuchMethodException e) {
            return false;
        }
    }

    /**
     * One renewal round: expire what could not be renewed in time, then renew the rest on the workers, in one backend
     * call, or one call per lease for a backend that renews one lease after another. Returns without waiting for
     * them: a lease still in flight next round is skipped then (its I/O lock is taken).
     */
    private void renewAll() {
        List<CoreLease> due = leasesDue();
        if (due.isEmpty()) {
            return;
        }
        if (!perLease) {
            dispatch(() -> renew(due));
            return;
        }
        for (CoreLease lease : due) {
            dispatch(() -> renew(List.of(lease)));
        }
    }

    private void dispatch(Runnable round) {
        try {
            workers.execute(round);
        } catch (RejectedExecutionException closing) {
            // the client is closing: its leases are being released, nothing to renew
        }
    }

    /**
     * The held leases, after marking lost those whose time ran out and releasing those whose owner thread died.
     * Their owners may release them meanwhile.
     */
    List<CoreLease> leasesDue() {
        List<CoreLease> due = new ArrayList<>();
        boolean bounded = client.validityIsBounded();
        long now = System.nanoTime();
        for (CoreLease lease : held) {
            if (!lease.isHeld()) {
                continue;
            }
            // Renewed forever otherwise: nobody is left who could release it.
            if (!lease.ownerAlive()) {
                lease.releaseAbandoned();
                continue;
            }
            // Renewing it now would make it valid again after the core may already have said otherwise.
            if (bounded && now - lease.validUntilNanos() >= 0) {
                lease.markLost(lease.ranOut());
                continue;
            }
            // Not confirmed for a while (failed or late renewals): watch for its expiry from now on.
            if (bounded && lease.validUntilNanos() - now <= timerHorizonNanos && !lease.expiryWatched()) {
                client.watchExpiry(lease);
            }
            due.add(lease);
        }
        return due;
    }

    /**
     * Renews {@code due} in one backend call, but only those still held once their I/O lock is ours. Each lease's
     * I/O lock is given back as soon as the backend reports its outcome, so that its owner's release waits for
     * that lease's round trip only, not for the rest of the round.
     */
    void renew(List<CoreLease> due) {
        Map<BackendLease, Outcome> outcomes = new IdentityHashMap<>(due.size() * 2);
        List<BackendLease> batch = new ArrayList<>(due.size());
        for (CoreLease lease : due) {
            // Skip a lease whose owner is releasing it right now; the SPI promises one call at a time.
            if (!lease.io.tryAcquire()) {
                continue;
            }
            // Released or lost since it was chosen? A release ends the lease under this lock, so a lease held now
            // stays unreleased until its outcome is reported. The SPI renews held leases only: a released one's
            // connection may already be back in a pool.
            if (!lease.isHeld()) {
                lease.io.release();
                continue;
            }
            outcomes.put(lease.backendLease(), new Outcome(lease));
            batch.add(lease.backendLease());
        }
        if (batch.isEmpty()) {
            return;
        }
        RenewalReport report = new RenewalReport() {
            @Override
            public void renewed(BackendLease lease, long sentAtNanos) {
                settle(outcomes, lease, l -> l.renewed(sentAtNanos));
            }

            @Override
            public void lost(BackendLease lease, String reason) {
                settle(
                        outcomes,
                        lease,
                        l -> l.markLost(new LockLostException(
                                "Lease of key '" + l.key() + "' is no longer held in the store: " + reason)));
            }

            @Override
            public void unconfirmed(BackendLease lease, Throwable cause) {
                settle(outcomes, lease, l -> {
                    client.signals().renewalFailed(l.key(), cause);
                    CoreLockClient.LOG.log(
                            System.Logger.Level.WARNING,
                            "Renewal of key '" + l.key() + "' not confirmed; will retry: " + cause);
                });
            }
        };
        RuntimeException failed = null;
        try {
            backend.renew(batch, report);
        } catch (RuntimeException e) {
            failed = e;
            CoreLockClient.LOG.log(System.Logger.Level.WARNING, "Renewal round failed; will retry: " + e, e);
        } finally {
            // Whatever the backend left unreported is unconfirmed: its I/O lock must come back all the same.
            for (Outcome o : outcomes.values()) {
                if (o.report()) {
                    client.signals()
                            .renewalFailed(o.lease.key(), failed != null ? failed : "the backend reported no outcome");
                    o.lease.io.release();
                }
            }
        }
    }

    /** Applies the first outcome reported for {@code lease} in this round, then gives back its I/O lock. */
    private static void settle(Map<BackendLease, Outcome> outcomes, BackendLease lease, Consumer<CoreLease> apply) {
        Outcome o = outcomes.get(lease);
        if (o != null && o.report()) {
            try {
                apply.accept(o.lease);
            } finally {
                o.lease.io.release();
            }
        }
    }

    /** One lease of a round; reported once, by whichever outcome comes first. */
    private static final class Outcome {
        final CoreLease lease;
        private final AtomicBoolean reported = new AtomicBoolean();

        Outcome(CoreLease lease) {
            this.lease = lease;
        }

        boolean report() {
            return reported.compareAndSet(false, true);
        }
    }

    /** Stops the rounds, interrupting those in progress. */
    void shutdownNow() {
        thread.shutdownNow();
        workers.shutdownNow();
    }

    boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        return thread.awaitTermination(timeout, unit)
                && workers.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    }
}
