package org.locksmith.lock.tck.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.locksmith.lock.DistributedLock;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.tck.LockFaults;
import org.locksmith.lock.tck.TckThreads;

/** Contracts 3 (reentrancy) and 4 (ownership). */
public final class OwnershipContract {
    private final TckEnv env;

    public OwnershipContract(TckEnv env) {
        this.env = env;
    }

    public void holdCountsAndReleaseOrder() throws Exception {
        LockClient a = env.client("A");
        LockClient b = env.client("B");
        String key = env.key("reentrant");
        DistributedLock lock = a.lock(key);
        LockLease first = lock.acquire(Duration.ofSeconds(5));
        LockLease second = lock.acquire(Duration.ofSeconds(5));
        LockLease third = lock.tryAcquire()
                .orElseThrow(() -> new AssertionError(
                        env.at(a, key) + "tryAcquire() by the holding thread must re-enter (REENTRANT declared)"));
        assertThat(second)
                .as(env.at(a, key) + "re-entry returns the same lease")
                .isSameAs(first);
        assertThat(third)
                .as(env.at(a, key) + "re-entry by tryAcquire returns the same lease")
                .isSameAs(first);
        assertThat(first.holdCount())
                .as(env.at(a, key) + "hold count after three acquires")
                .isEqualTo(3);
        third.release();
        second.release();
        assertThat(first.holdCount())
                .as(env.at(a, key) + "hold count after two releases")
                .isEqualTo(1);
        assertThat(first.isValid())
                .as(env.at(a, key) + "lease valid while one hold remains")
                .isTrue();
        Probes.assertNotGrantable(env, b, key, "client A still had one hold of three");
        first.release();
        assertThat(first.holdCount())
                .as(env.at(a, key) + "hold count after the last release")
                .isZero();
        Probes.assertGrantable(env, b, key, "after client A released all three holds");
        assertThatThrownBy(first::release)
                .as(env.at(a, key) + "one release too many")
                .isInstanceOf(IllegalMonitorStateException.class);
        // The j.u.c adapter shares the hold counts.
        Lock juc = lock.asLock();
        juc.lock();
        LockLease viaApi = lock.acquire(Duration.ofSeconds(5));
        assertThat(viaApi.holdCount())
                .as(env.at(a, key) + "asLock().lock() then acquire()")
                .isEqualTo(2);
        juc.unlock();
        Probes.assertNotGrantable(env, b, key, "client A still held one hold through acquire()");
        viaApi.release();
        assertThatThrownBy(juc::unlock)
                .as(env.at(a, key) + "asLock().unlock() with no hold left")
                .isInstanceOf(IllegalMonitorStateException.class);
        Probes.assertGrantable(env, b, key, "after asLock and acquire holds were all released");
    }

    /** Without REENTRANT, a second acquire by the holding thread fails at once, it does not deadlock. */
    public void reentryFailsClearlyWhenUndeclared() throws Exception {
        LockClient a = env.client("A");
        String key = env.key("not-reentrant");
        LockLease lease = a.lock(key).acquire(Duration.ofSeconds(5));
        long start = System.nanoTime();
        assertThatThrownBy(() -> a.lock(key).acquire(Duration.ofSeconds(2)))
                .as(env.at(a, key) + "re-entry without REENTRANT must fail clearly, not time out")
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(key);
        assertThat(TckEnv.millisSince(start))
                .as(env.at(a, key) + "re-entry failure must be immediate")
                .isLessThan(TckEnv.allow(Duration.ofMillis(500)).toMillis());
        assertThat(lease.holdCount()).isEqualTo(1);
        lease.release();
    }

    public void releaseByAnotherThreadFails() throws Exception {
        LockClient a = env.client("A");
        LockClient b = env.client("B");
        String key = env.key("other-thread");
        LockLease lease = a.lock(key).acquire(Duration.ofSeconds(5));
        Future<Throwable> other = env.fork(() -> {
            try {
                lease.release();
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
        Throwable thrown = other.get(10, TimeUnit.SECONDS);
        assertThat(thrown)
                .as(env.at(a, key) + "release() of thread main's lease by another thread")
                .isInstanceOf(IllegalMonitorStateException.class);
        Future<Throwable> unlock = env.fork(() -> {
            try {
                a.lock(key).asLock().unlock();
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
        assertThat(unlock.get(10, TimeUnit.SECONDS))
                .as(env.at(a, key) + "asLock().unlock() by a thread that does not hold the key")
                .isInstanceOf(IllegalMonitorStateException.class);
        assertThat(lease.isValid())
                .as(env.at(a, key) + "lease after a foreign release attempt")
                .isTrue();
        assertThat(lease.holdCount())
                .as(env.at(a, key) + "hold count after a foreign release")
                .isEqualTo(1);
        Probes.assertNotGrantable(env, b, key, "another thread had failed to release client A's lease");
        lease.release();
        Probes.assertGrantable(env, b, key, "after the owner released");
    }

    public void otherClientCannotRelease() throws Exception {
        LockClient a = env.client("A");
        LockClient b = env.client("B");
        String key = env.key("other-client");
        LockLease lease = a.lock(key).acquire(Duration.ofSeconds(5));
        assertThatThrownBy(() -> b.lock(key).asLock().unlock())
                .as(env.at(b, key) + "unlock through a client that does not hold the key")
                .isInstanceOf(IllegalMonitorStateException.class);
        assertThat(b.lock(key).isHeldByCurrentThread())
                .as(env.at(b, key) + "isHeldByCurrentThread through the other client")
                .isFalse();
        Probes.assertNotGrantable(env, b, key, "client A held it and client B had tried to unlock it");
        assertThat(lease.isValid()).isTrue();
        lease.release();
    }

    /**
     * A holder that lost its lease behind its back (state deleted, session killed, or lease expired) and releases
     * afterwards must not free the key for its new holder, another client: the store's release is owner-checked.
     */
    public void staleReleaseDoesNotFreeNewHolder() throws Exception {
        staleRelease(false);
    }

    /**
     * The same with the new holder on another thread of the same client: the store must tell the two leases apart,
     * not only the two clients (an owner id per client, not per lease, fails this).
     */
    public void staleReleaseDoesNotFreeSameClientsOtherThread() throws Exception {
        staleRelease(true);
    }

    private void staleRelease(boolean sameClient) throws Exception {
        LockClient a = env.client("A");
        LockClient b = sameClient ? a : env.client("B");
        String newHolder = sameClient ? "another thread of client A" : "client B";
        LockClient c = env.client("C");
        String key = env.key(sameClient ? "stale-release-thread" : "stale-release");
        boolean viaDelete = env.canInflict(LockFaults.Fault.DELETE_LOCK_STATE);
        // Only a session-bound lock is lost with its session; a renewed lease survives a killed connection. The
        // session is killed before the new holder asks, so a same-client new holder gets a session of its own.
        boolean viaSession = env.canInflict(LockFaults.Fault.KILL_SESSION) && env.has(LockFeature.SESSION_BOUND);
        boolean viaExpiry = env.has(LockFeature.LEASE_EXPIRY) && !env.has(LockFeature.AUTO_RENEWAL);
        org.junit.jupiter.api.Assumptions.assumeTrue(
                viaDelete || viaSession || viaExpiry,
                TckEnv.NEEDS + "a way to lose a lease: fault DELETE_LOCK_STATE, KILL_SESSION with SESSION_BOUND, or "
                        + "LEASE_EXPIRY without AUTO_RENEWAL");
        LockLease stale = a.lock(key).acquire(Duration.ofSeconds(5));
        String how;
        if (viaDelete) {
            how = "its state was deleted (DELETE_LOCK_STATE)";
            env.faults().deleteLockState(key);
        } else if (viaSession) {
            how = "its session was killed (KILL_SESSION)";
            env.faults().killSession(a);
        } else {
            how = "its lease expired without renewal";
        }
        Duration bound = TckEnv.allow(env.timings()
                .leaseTime()
                .multipliedBy(2)
                .plus(env.timings().sessionTimeout())
                .plus(env.timings().handoff()));
        String why = "after client A's lease was lost: " + how;
        // The other thread of client A: one thread, since a lease is released by the thread that holds it.
        ExecutorService otherThread = Executors.newSingleThreadExecutor(TckThreads.factory("tck-other-thread"));
        env.closeAtEnd(otherThread::shutdownNow);
        LockLease fresh = sameClient
                ? otherThread
                        .submit(() ->
                                Probes.acquireWithin(env, b, key, bound, why).value())
                        .get(bound.plusSeconds(10).toMillis(), TimeUnit.MILLISECONDS)
                : Probes.acquireWithin(env, b, key, bound, why).value();
        try {
            stale.release();
        } catch (LockLostException expected) {
            // the stale holder is told its work was not protected: fine
        } catch (RuntimeException e) {
            // a store-side failure is acceptable too, as long as the new holder keeps the key
        }
        if (c.lock(key)
                .tryAcquire()
                .map(l -> {
                    l.release();
                    return true;
                })
                .orElse(false)) {
            fail(env.at(a, key) + "client A's late release of a lease lost because " + how
                    + " freed the key while " + newHolder + " held it: the store's release is not owner-checked"
                    + (sameClient ? " per lease (two leases of one client look alike to it)" : ""));
        }
        assertThat(fresh.isValid())
                .as(env.at(b, key) + "new holder's lease (" + newHolder + ") after a stale release")
                .isTrue();
        if (sameClient) {
            otherThread
                    .submit(() -> {
                        fresh.release();
                        return null;
                    })
                    .get(bound.plusSeconds(10).toMillis(), TimeUnit.MILLISECONDS);
        } else {
            fresh.release();
        }
    }
}
