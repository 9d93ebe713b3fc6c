package org.locksmith.lock.tck.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Assumptions;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.spi.Abandonment;
import org.locksmith.lock.tck.LockFaults;
import org.locksmith.lock.tck.TckTimings;

/**
 * What happens when a lease ends without a release, checked in one JVM on any backend built on the core: the core's
 * {@link Abandonment} hook stops a holder's renewals, so no worker process is needed. The store must free the key
 * when the declared lease ends (not later), a waiter must be granted then (not at its own deadline), the stale holder
 * must no longer believe it holds (the store did not grant less than it declared), and the stale holder's late
 * release must never free the key for its next holder, whichever way the lease was lost. Renewal rounds racing
 * releases must leave released keys free.
 */
public final class LeaseEndContract {
    private final TckEnv env;

    public LeaseEndContract(TckEnv env) {
        this.env = env;
    }

    private TckTimings t() {
        return env.timings();
    }

    /**
     * How late after the declared lease end the next grant may come: the hand-off, a tenth of the lease for the
     * store's expiry tick and the drift margin, and 25 ms for scheduling, all stretched by the time factor.
     */
    Duration expirySlack() {
        return TckEnv.allow(t().handoff().plus(t().leaseTime().dividedBy(10)).plusMillis(25));
    }

    /** Stops {@code client}'s renewals through the core, or skips the test if the client is not built on it. */
    private void stopRenewals(LockClient client) {
        Assumptions.assumeTrue(
                Abandonment.stopRenewals(client),
                TckEnv.NEEDS + "a client built on the core (Locks.client) for its abandon hook, which this client"
                        + " is not");
    }

    /**
     * c07: a holder stops renewing right after its grant; another client polling with {@code tryAcquire()} must get
     * the key once the declared lease has run out, no later than lease + {@link #expirySlack()} after the renewals
     * stopped, and the stale lease must be invalid by the time the key is granted again.
     */
    public void unrenewedLeaseFreedAtDeclaredTime() throws Exception {
        LockClient a = env.client("A");
        LockClient b = env.client("B");
        String key = env.key("unrenewed");
        LockLease stale = a.lock(key).acquire(Duration.ofSeconds(5));
        stopRenewals(a);
        long stopped = System.nanoTime();
        Duration bound = t().leaseTime().plus(expirySlack());
        java.util.concurrent.atomic.AtomicReference<LockLease> next =
                new java.util.concurrent.atomic.AtomicReference<>();
        AtomicLong grantedAt = new AtomicLong();
        try {
            Awaitility.await()
                    .pollInSameThread() // the lease belongs to the thread that got it, which releases it below
                    .pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(5))
                    .atMost(bound.plus(TckEnv.allow(Duration.ofSeconds(2))))
                    .until(() -> {
                        Optional<LockLease> l = b.lock(key).tryAcquire();
                        if (l.isPresent()) {
                            grantedAt.set(System.nanoTime());
                            next.set(l.get());
                        }
                        return l.isPresent();
                    });
        } catch (ConditionTimeoutException e) {
            // reported below
        }
        long grantedMs = next.get() == null
                ? TckEnv.millisSince(stopped)
                : TimeUnit.NANOSECONDS.toMillis(grantedAt.get() - stopped);
        boolean staleValid = stale.isValid();
        if (next.get() != null) {
            next.get().release();
        }
        env.note("renewals stopped -> key free (ms)", grantedMs);
        assertThat(next.get())
                .as(env.at(b, key) + "the key of a lease that nobody renewed was not free "
                        + grantedMs + " ms after its renewals stopped (lease "
                        + t().leaseTime().toMillis() + " ms)")
                .isNotNull();
        assertThat(staleValid)
                .as(env.at(a, key) + "the unrenewed lease still valid when client B was granted the key "
                        + grantedMs + " ms after its renewals stopped: the store kept it shorter than the "
                        + t().leaseTime().toMillis() + " ms the client trusts it for (two valid holders)")
                .isFalse();
        assertThat(grantedMs)
                .as(env.at(b, key) + "the store kept an unrenewed lease longer than its declared "
                        + t().leaseTime().toMillis() + " ms: free only " + grantedMs
                        + " ms after the renewals stopped, allowed " + bound.toMillis() + " ms")
                .isLessThanOrEqualTo(bound.toMillis());
    }

    /**
     * c07: a waiter queued behind a holder that stops renewing, with a deadline far beyond the lease, is granted when
     * the lease ends: no later than lease + {@link #expirySlack()} after the renewals stopped (a waiter that hears
     * only of releases learns of the expiry at its deadline), and the stale lease is invalid by then.
     */
    public void waiterGrantedWhenLeaseEnds() throws Exception {
        LockClient a = env.client("A");
        LockClient b = env.client("B");
        String key = env.key("expiry-waiter");
        LockLease stale = a.lock(key).acquire(Duration.ofSeconds(5));
        Duration deadline = t().leaseTime().multipliedBy(5).plus(TckEnv.allow(Duration.ofSeconds(1)));
        CountDownLatch waiting = new CountDownLatch(1);
        AtomicLong staleValidAtGrant = new AtomicLong(-1);
        Future<Long> granted = env.fork(() -> {
            waiting.countDown();
            LockLease lease = b.lock(key).acquire(deadline);
            long at = System.nanoTime();
            staleValidAtGrant.set(stale.isValid() ? 1 : 0);
            lease.release();
            return at;
        });
        waiting.await(10, TimeUnit.SECONDS);
        stopRenewals(a);
        long stopped = System.nanoTime();
        long grantedAt;
        try {
            grantedAt = granted.get(deadline.plusSeconds(10).toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new AssertionError(
                    env.at(b, key) + "the waiter (deadline " + deadline.toMillis() + " ms) failed: " + e.getCause(),
                    e.getCause());
        }
        long ms = TimeUnit.NANOSECONDS.toMillis(grantedAt - stopped);
        env.note("renewals stopped -> waiter granted (ms)", ms);
        Duration bound = t().leaseTime().plus(expirySlack());
        assertThat(staleValidAtGrant.get())
                .as(env.at(a, key) + "the unrenewed lease still valid when the waiter was granted the key " + ms
                        + " ms after its renewals stopped (two valid holders)")
                .isZero();
        assertThat(ms)
                .as(env.at(b, key) + "a waiter with a deadline of " + deadline.toMillis() + " ms was granted only "
                        + ms + " ms after the holder's renewals stopped (lease "
                        + t().leaseTime().toMillis()
                        + " ms, allowed " + bound.toMillis() + " ms): it was not told the lease ended")
                .isLessThanOrEqualTo(bound.toMillis());
    }

    /**
     * c09: a SESSION_BOUND client abandoned while holding, as a crash would (renewals stopped, connections closed
     * without a release, through the core's {@link Abandonment#abandon}), frees its key within the session timeout:
     * a waiter with a longer deadline is granted no later than session + {@link #expirySlack()} after the abandon.
     */
    public void abandonedClientFreesWithinSession() throws Exception {
        LockClient a = env.client("A");
        LockClient b = env.client("B");
        String key = env.key("abandoned-session");
        a.lock(key).acquire(Duration.ofSeconds(5));
        Assumptions.assumeTrue(
                Abandonment.abandon(a),
                TckEnv.NEEDS + "a client built on the core (Locks.client) for its abandon hook, which this client"
                        + " is not");
        long abandoned = System.nanoTime();
        Duration bound = t().sessionTimeout().plus(expirySlack());
        Probes.Timed<LockLease> next = Probes.acquireWithin(
                env,
                b,
                key,
                bound.plus(TckEnv.allow(Duration.ofSeconds(2))),
                "after client A was abandoned holding it (connections closed without a release; session "
                        + t().sessionTimeout().toMillis() + " ms)");
        long ms = TckEnv.millisSince(abandoned);
        next.value().release();
        env.note("client abandoned -> next grant (ms)", ms);
        assertThat(ms)
                .as(env.at(b, key) + "granted " + ms + " ms after client A was abandoned holding the key, allowed "
                        + bound.toMillis() + " ms (session "
                        + t().sessionTimeout().toMillis() + " ms)")
                .isLessThanOrEqualTo(bound.toMillis());
    }

    /** One way a holder can lose its lease behind its back, as the backend's hooks and features allow. */
    private record Loss(String how, Inflict inflict) {}

    private interface Inflict {
        void on(LockClient holder, String key) throws Exception;
    }

    /** Every way of losing a lease this backend's hooks and features offer, each usable on a client of its own. */
    private List<Loss> waysToLose() {
        List<Loss> ways = new ArrayList<>();
        if (env.canInflict(LockFaults.Fault.DELETE_LOCK_STATE)) {
            ways.add(new Loss(
                    "its state was deleted (DELETE_LOCK_STATE)",
                    (a, key) -> env.faults().deleteLockState(key)));
        }
        if (env.canInflict(LockFaults.Fault.KILL_SESSION) && env.has(LockFeature.SESSION_BOUND)) {
            ways.add(new Loss(
                    "its session was killed (KILL_SESSION)",
                    (a, key) -> env.faults().killSession(a)));
        }
        if (env.has(LockFeature.LEASE_EXPIRY)) {
            ways.add(new Loss("its renewals stopped and its lease expired", (a, key) -> stopRenewals(a)));
        }
        return ways;
    }

    /**
     * c04: for every way of losing a lease the backend offers (state deleted, session killed, lease expired after
     * its renewals stopped), the stale holder's late release, made while the next holder holds, leaves the next
     * holder holding: another client cannot get the key, the store view still shows it, and the next holder's lease
     * stays valid for two renewal intervals after.
     */
    public void staleReleaseAfterEveryWayOfLoss() throws Exception {
        List<Loss> ways = waysToLose();
        Assumptions.assumeFalse(
                ways.isEmpty(),
                TckEnv.NEEDS + "a way to lose a lease: fault DELETE_LOCK_STATE, KILL_SESSION with SESSION_BOUND, or "
                        + "LEASE_EXPIRY");
        LockClient c = env.client("C");
        List<Future<?>> runs = new ArrayList<>();
        for (int i = 0; i < ways.size(); i++) {
            Loss way = ways.get(i);
            String key = env.key("stale-" + i);
            LockClient a = env.client("A" + i);
            LockClient b = env.client("B" + i);
            runs.add(env.fork(() -> {
                staleRelease(way, a, b, c, key);
                return null;
            }));
        }
        awaitAll(runs);
    }

    /** Waits for every run, failing with the first failure as soon as it happens (the others are then abandoned). */
    private static void awaitAll(List<Future<?>> runs) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(100);
        List<Future<?>> left = new ArrayList<>(runs);
        while (!left.isEmpty()) {
            for (java.util.Iterator<Future<?>> it = left.iterator(); it.hasNext(); ) {
                Future<?> run = it.next();
                if (run.isDone()) {
                    it.remove();
                    try {
                        run.get();
                    } catch (java.util.concurrent.ExecutionException e) {
                        if (e.getCause() instanceof Error error) {
                            throw error;
                        }
                        throw e;
                    }
                }
            }
            if (left.isEmpty()) {
                return;
            }
            if (System.nanoTime() - end > 0) {
                throw new java.util.concurrent.TimeoutException(left.size() + " runs still going after 100 s");
            }
            try {
                left.get(0).get(20, TimeUnit.MILLISECONDS); // the pace of this loop
            } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException stillGoing) {
                // looked at in the next pass
            }
        }
    }

    private void staleRelease(Loss way, LockClient a, LockClient b, LockClient c, String key) throws Exception {
        LockLease stale = a.lock(key).acquire(Duration.ofSeconds(5));
        way.inflict().on(a, key);
        Duration bound = TckEnv.allow(
                t().leaseTime().multipliedBy(2).plus(t().sessionTimeout()).plus(t().handoff()));
        LockLease fresh = Probes.acquireWithin(env, b, key, bound, "after its lease was lost: " + way.how())
                .value();
        checkStaleReleaseLeavesHolder(a, stale, b, fresh, c, key, way.how());
        fresh.release();
        Probes.assertGrantable(env, c, key, "after the new holder released");
    }

    /** The checks after a lost lease's holder released late while {@code fresh} held the key. */
    private void checkStaleReleaseLeavesHolder(
            LockClient a, LockLease stale, LockClient b, LockLease fresh, LockClient c, String key, String how) {
        try {
            stale.release();
        } catch (LockLostException expected) {
            // the stale holder is told its work was not protected: fine
        } catch (RuntimeException e) {
            // a store-side failure is acceptable too, as long as the new holder keeps the key
        }
        String situation = "client A's late release of a lease lost because " + how + ", while client B held it";
        Probes.assertNotGrantable(env, c, key, situation + ": the store's release is not owner-checked");
        OptionalInt entries = env.storeEntries(key);
        if (entries.isPresent()) {
            assertThat(entries.getAsInt())
                    .as(env.at(b, key) + "store records of the key after " + situation)
                    .isPositive();
        }
        // A release that deleted the new holder's state shows at the latest when its renewal finds it gone.
        Duration during = t().renewInterval().multipliedBy(2).plusMillis(50);
        try {
            Awaitility.await()
                    .atMost(during.plusSeconds(2))
                    .during(during)
                    .pollInterval(Duration.ofMillis(25))
                    .until(fresh::isValid);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError(
                    env.at(b, key) + "the new holder's lease turned invalid within " + during.toMillis() + " ms of "
                            + situation,
                    e);
        }
        Probes.assertNotGrantable(env, c, key, situation + " (checked again " + during.toMillis() + " ms on)");
    }

    /**
     * c04: a holder whose renewals fail through a store outage (STORE_OUTAGE) until its lease has run out, and which
     * releases late, after the store is back and another client holds the key, does not free that client's key: a
     * failed renewal must not switch the release to one without the owner check.
     */
    public void staleReleaseAfterOutage() throws Exception {
        LockClient a = env.client("A");
        LockClient b = env.client("B");
        LockClient c = env.client("C");
        String key = env.key("stale-outage");
        LockLease stale = a.lock(key).acquire(Duration.ofSeconds(5));
        // The outage lasts until the holder's core has given the lease up, and a renewal interval more: by then the
        // store's lease has run out too.
        Duration lostWithin = TckEnv.allow(
                t().leaseTime().multipliedBy(2).plus(t().operationTimeout()).plus(Duration.ofSeconds(1)));
        try (LockFaults.Outage outage = env.faults().beginOutage()) {
            try {
                Awaitility.await()
                        .atMost(lostWithin)
                        .pollInterval(Duration.ofMillis(20))
                        .until(() -> !stale.isValid());
            } catch (ConditionTimeoutException e) {
                throw new AssertionError(
                        env.at(a, key) + "lease still valid " + lostWithin.toMillis()
                                + " ms into a store outage that stopped its renewals",
                        e);
            }
            Probes.quietPeriod(t().renewInterval(), "the store's lease runs out too, unseen through the outage");
        }
        Duration bound =
                TckEnv.allow(t().leaseTime().plus(t().operationTimeout().multipliedBy(3)));
        java.util.concurrent.atomic.AtomicReference<LockLease> next =
                new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.atomic.AtomicReference<Throwable> last =
                new java.util.concurrent.atomic.AtomicReference<>();
        try {
            Awaitility.await()
                    .pollInSameThread() // the lease belongs to the thread that got it
                    .pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(50))
                    .atMost(bound)
                    .until(() -> {
                        try {
                            b.lock(key).tryAcquire().ifPresent(next::set);
                        } catch (LockBackendException storeStillRecovering) {
                            last.set(storeStillRecovering);
                        }
                        return next.get() != null;
                    });
        } catch (ConditionTimeoutException e) {
            throw new AssertionError(
                    env.at(b, key) + "was not granted the key of a lease that expired during an outage within "
                            + bound.toMillis() + " ms of the store's return; last store failure: " + last.get(),
                    e);
        }
        LockLease fresh = next.get();
        checkStaleReleaseLeavesHolder(
                a, stale, b, fresh, c, key, "its renewals failed through a store outage until its lease ran out");
        fresh.release();
        Probes.assertGrantable(env, c, key, "after the new holder released");
    }

    /**
     * c08: renewal rounds racing releases touch nothing released. Two clients take turns on several keys, each
     * holding for a random time of up to one and a half renewal intervals, so that many releases fall while a
     * renewal round is in flight; every hold must stay valid to its release, every release must find its lease
     * held, the other client must be granted each key within half a lease of its release (a renewal that re-created
     * the released key would hold it a lease long), and at the end every key is free and, where the store can be
     * seen, has no record left.
     */
    public void renewalsRacingReleasesTouchNothing() throws Exception {
        LockClient a = env.client("A");
        LockClient b = env.client("B");
        LockClient c = env.client("C");
        int keys = 6;
        int turns = 16;
        long maxHoldNanos = t().renewInterval().multipliedBy(3).dividedBy(2).toNanos();
        Duration grantBound = TckEnv.allow(t().leaseTime().dividedBy(2).plus(t().handoff()));
        List<String> names = new ArrayList<>();
        List<Future<?>> runs = new ArrayList<>();
        for (int k = 0; k < keys; k++) {
            String key = env.key("race-" + k);
            names.add(key);
            // Turns alternate between the clients; each side takes its turns in order on a thread of its own.
            java.util.concurrent.Semaphore[] turn = {
                new java.util.concurrent.Semaphore(1), new java.util.concurrent.Semaphore(0)
            };
            AtomicLong releasedAt = new AtomicLong();
            for (int side = 0; side < 2; side++) {
                LockClient me = side == 0 ? a : b;
                int mine = side;
                runs.add(env.fork(() -> {
                    for (int i = mine; i < turns; i += 2) {
                        if (!turn[mine].tryAcquire(100, TimeUnit.SECONDS)) {
                            throw new IllegalStateException("turn " + i + " never came: the other side failed");
                        }
                        long askedAt = System.nanoTime();
                        LockLease lease;
                        try {
                            lease = me.lock(key).acquire(grantBound.plusSeconds(5));
                        } catch (org.locksmith.lock.LockTimeoutException e) {
                            throw new AssertionError(
                                    env.at(me, key) + "turn " + i + ": not granted the key "
                                            + TckEnv.millisSince(releasedAt.get())
                                            + " ms after the other client released it",
                                    e);
                        }
                        long waitedMs = i == 0
                                ? 0
                                : TimeUnit.NANOSECONDS.toMillis(
                                        System.nanoTime() - Math.max(askedAt, releasedAt.get()));
                        assertThat(waitedMs)
                                .as(env.at(me, key) + "turn " + i + ": granted " + waitedMs + " ms after the other"
                                        + " client released the key (allowed " + grantBound.toMillis() + " ms): a"
                                        + " renewal in flight during that release re-created or extended the key")
                                .isLessThanOrEqualTo(grantBound.toMillis());
                        long holdUntil =
                                System.nanoTime() + ThreadLocalRandom.current().nextLong(maxHoldNanos + 1);
                        // Holding is the point here, not waiting for a condition.
                        while (System.nanoTime() - holdUntil < 0) {
                            java.util.concurrent.locks.LockSupport.parkNanos(holdUntil - System.nanoTime());
                        }
                        assertThat(lease.isValid())
                                .as(env.at(me, key) + "turn " + i + ": lease validity at its release (renewed, and "
                                        + "the other client's renewals may only touch their own leases)")
                                .isTrue();
                        try {
                            lease.release();
                        } catch (LockLostException e) {
                            throw new AssertionError(
                                    env.at(me, key) + "turn " + i + ": the release found the lease"
                                            + " no longer held: a renewal of the other client's released lease took the"
                                            + " key over",
                                    e);
                        }
                        releasedAt.set(System.nanoTime());
                        turn[1 - mine].release();
                    }
                    return null;
                }));
            }
        }
        awaitAll(runs);
        // A renewal still in flight at the last release lands within one more renewal interval.
        Duration settle = t().renewInterval().plusMillis(100);
        Probes.quietPeriod(settle, "a renewal in flight at the last release lands");
        // What one plain cycle leaves in the store (a fencing counter, say), on a key no renewal ever touched.
        String control = env.key("race-control");
        Probes.assertGrantable(env, c, control, "(a key of its own)");
        OptionalInt baseline = env.storeEntries(control);
        for (String key : names) {
            Probes.assertGrantable(env, c, key, "after both clients released it and renewals settled");
            OptionalInt entries = env.storeEntries(key);
            if (entries.isPresent() && baseline.isPresent()) {
                assertThat(entries.getAsInt())
                        .as(env.at(key) + "store records of a released key after renewal rounds raced its releases,"
                                + " against a key acquired and released once")
                        .isLessThanOrEqualTo(baseline.getAsInt());
            }
        }
    }
}
