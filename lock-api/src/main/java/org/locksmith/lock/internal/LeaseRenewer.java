package org.locksmith.lock.internal;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.LockBackend;

/**
 * Renews one client's held leases in rounds, every {@link LockBackend#renewInterval()}, on a daemon thread of its
 * own ({@code locksmith-renewer-N}). A round is store I/O and may block up to the store's timeout, which is why
 * nothing else runs on this thread: the watch over waiting threads and the expiry timers live on the client's
 * watchdog, so a slow store neither delays a waiter's cancellation nor is delayed by it.
 */
final class LeaseRenewer {
    private final CoreLockClient client;
    private final LockBackend backend;
    private final Collection<CoreLease> held;
    private final ScheduledThreadPoolExecutor thread;

    /** @param held a live view of the client's held leases */
    LeaseRenewer(CoreLockClient client, LockBackend backend, Collection<CoreLease> held, long everyNanos) {
        this.client = client;
        this.backend = backend;
        this.held = held;
        this.thread = new ScheduledThreadPoolExecutor(1, new DaemonThreads("renewer"));
        thread.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        thread.scheduleWithFixedDelay(this::renewAll, everyNanos, everyNanos, TimeUnit.NANOSECONDS);
    }

    /** One renewal round: expire what could not be renewed in time, then renew the rest in one backend call. */
    private void renewAll() {
        renew(leasesDue());
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
            due.add(lease);
        }
        return due;
    }

    /** Renews {@code due} in one backend call, but only those still held once their I/O lock is ours. */
    void renew(List<CoreLease> due) {
        List<CoreLease> leases = new ArrayList<>(due.size());
        List<BackendLease> batch = new ArrayList<>(due.size());
        for (CoreLease lease : due) {
            // Skip a lease whose owner is releasing it right now; the SPI promises one call at a time.
            if (!lease.io.tryLock()) {
                continue;
            }
            // Released or lost since it was chosen? A release ends the lease under this lock, so a lease held now
            // stays unreleased until the renewal is done. The SPI renews held leases only: a released one's
            // connection may already be back in a pool.
            if (!lease.isHeld()) {
                lease.io.unlock();
                continue;
            }
            leases.add(lease);
            batch.add(lease.backendLease());
        }
        if (batch.isEmpty()) {
            return;
        }
        long sentAt = System.nanoTime();
        try {
            List<BackendLease> lost = backend.renew(batch);
            Set<BackendLease> lostSet = lost.isEmpty() ? Set.of() : Set.copyOf(lost);
            for (CoreLease lease : leases) {
                if (lostSet.contains(lease.backendLease())) {
                    lease.markLost(new LockLostException(
                            "Lease of key '" + lease.key() + "' is no longer held in the store (renewal refused)"));
                } else {
                    lease.renewed(sentAt);
                }
            }
        } catch (LockBackendException e) {
            CoreLockClient.LOG.log(System.Logger.Level.WARNING, "Renewal failed; will retry: " + e.getMessage());
        } catch (RuntimeException e) {
            CoreLockClient.LOG.log(System.Logger.Level.ERROR, "Renewal failed unexpectedly; will retry", e);
        } finally {
            for (CoreLease lease : leases) {
                lease.io.unlock();
            }
        }
    }

    /** Stops the rounds, interrupting one in progress. */
    void shutdownNow() {
        thread.shutdownNow();
    }

    boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return thread.awaitTermination(timeout, unit);
    }
}
