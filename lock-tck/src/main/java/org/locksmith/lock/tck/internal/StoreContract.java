package org.locksmith.lock.tck.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.tck.LockFaults;

/** Contracts 15 (unavailable store) and 16 (cleanup). */
public final class StoreContract {
    private final TckEnv env;

    public StoreContract(TckEnv env) {
        this.env = env;
    }

    /** c15: during an outage operations fail with LockBackendException within the timeout; afterwards they work. */
    public void outageFailsFastAndRecovers() throws Exception {
        LockClient a = env.client("A");
        String key = env.key("outage");
        Probes.assertGrantable(env, a, key, "before the outage");
        Duration bound = TckEnv.allow(env.timings().operationTimeout().plus(Duration.ofMillis(500)));
        String other = env.key("outage-2");
        try (LockFaults.Outage outage = env.faults().beginOutage()) {
            // Both at once, on two keys: each must fail within the bound counted from its own start, so neither may
            // wait for the other's failure first, and the test waits out one operation timeout instead of two.
            long start = System.nanoTime();
            Future<Throwable> tryAcquire = attempt(() -> a.lock(key).tryAcquire());
            Future<Throwable> acquire = attempt(() -> Optional.of(a.lock(other).acquire(Duration.ofSeconds(60))));
            expectBackendFailure(a, key, "tryAcquire()", bound, start, tryAcquire);
            expectBackendFailure(a, other, "acquire(60 s)", bound, start, acquire);
        }
        Duration recovery = TckEnv.allow(env.timings().operationTimeout().multipliedBy(3));
        AtomicReference<Throwable> lastFailure = new AtomicReference<>();
        Awaitility.await("c15 client recovers after the outage")
                .atMost(recovery)
                .pollInterval(Duration.ofMillis(50))
                .until(() -> {
                    try {
                        Optional<LockLease> l = a.lock(key).tryAcquire();
                        l.ifPresent(LockLease::release);
                        return l.isPresent();
                    } catch (LockBackendException e) {
                        lastFailure.set(e);
                        return false;
                    }
                });
    }

    /**
     * c15: during an outage, releasing a held lease and closing a client that holds leases end within the operation
     * timeout (they do not wait for the store to come back); after the outage, a waiter blocked in {@code acquire}
     * is handed the key as promptly as before it.
     */
    public void releaseAndCloseBoundedAndHandOffsWorkAfter() throws Exception {
        LockClient h = env.client("H");
        LockClient c = env.client("C");
        String key = env.key("outage-release");
        CountDownLatch acquired = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        // The owner thread releases when told, during the outage; a release that waits for the store to come back
        // must not keep the outage open, so the kit waits for it with a bound.
        Future<Long> releasing = env.fork(() -> {
            LockLease held = h.lock(key).acquire(Duration.ofSeconds(5));
            acquired.countDown();
            go.await();
            long start = System.nanoTime();
            try {
                held.release();
            } catch (LockBackendException | LockLostException e) {
                // Either is honest: the store could not be told, or the lease was already lost.
            }
            return System.nanoTime() - start;
        });
        assertThat(acquired.await(10, TimeUnit.SECONDS))
                .as(env.at(h, key) + "acquired before the outage")
                .isTrue();
        c.lock(key + "-c1").acquire(Duration.ofSeconds(5));
        c.lock(key + "-c2").acquire(Duration.ofSeconds(5));
        Duration op = env.timings().operationTimeout();
        Duration releaseBound = TckEnv.allow(op.plus(Duration.ofMillis(500)));
        Duration closeBound = TckEnv.allow(op.plus(Duration.ofSeconds(1)));
        try (LockFaults.Outage outage = env.faults().beginOutage()) {
            // The release and the close at once (two clients): each is bounded from its own start, and the test
            // waits out one operation timeout instead of two.
            go.countDown();
            Future<Long> closing = env.fork(() -> {
                long start = System.nanoTime();
                c.close();
                return System.nanoTime() - start;
            });
            long took;
            try {
                took = releasing.get(releaseBound.toMillis() + 2_000, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                throw new AssertionError(env.at(h, key) + "release() of a held lease during a store outage hangs", e);
            }
            assertThat(took)
                    .as(env.at(h, key) + "release() of a held lease during a store outage took " + Probes.ms(took)
                            + "; the bound is operationTimeout + 500 ms, x factor = " + releaseBound.toMillis()
                            + " ms")
                    .isLessThanOrEqualTo(releaseBound.toNanos());
            try {
                took = closing.get(closeBound.toMillis() + 10_000, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                throw new AssertionError(
                        env.at(c, key) + "close() of a client holding 2 leases during a store outage" + " hangs", e);
            }
            assertThat(took)
                    .as(env.at(c, key) + "close() of a client holding 2 leases during a store outage took "
                            + Probes.ms(took) + "; the bound is operationTimeout + 1 s, x factor = "
                            + closeBound.toMillis() + " ms")
                    .isLessThanOrEqualTo(closeBound.toNanos());
        }
        // The store is back: once it serves again, blocking waits must be woken as before the outage.
        String after = env.key("outage-handoff");
        LockClient w = env.client("W");
        Awaitility.await("c15 clients recover after the outage")
                .atMost(TckEnv.allow(op.multipliedBy(3)))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> recovered(h, after) && recovered(w, after));
        boolean blocking = env.has(LockFeature.BLOCKING_WAKEUP);
        Duration each = TckEnv.allow(env.timings().handoff().plus(Duration.ofSeconds(blocking ? 1 : 2)));
        Duration median =
                blocking ? TckEnv.allow(max(env.timings().handoff().multipliedBy(4), Duration.ofMillis(100))) : each;
        List<Long> latencies = new ArrayList<>();
        for (int round = 0; round < 3; round++) {
            LockLease holding = h.lock(after).acquire(Duration.ofSeconds(5));
            Future<Long> granted = env.fork(() -> {
                try (LockLease l = w.lock(after).acquire(Duration.ofSeconds(20))) {
                    return System.nanoTime();
                }
            });
            Awaitility.await(env.at(w, after) + "waiter not granted while the key is held, after the outage")
                    .during(Duration.ofMillis(300))
                    .atMost(Duration.ofSeconds(2))
                    .until(() -> !granted.isDone());
            long released = System.nanoTime();
            holding.release();
            long at = granted.get(30, TimeUnit.SECONDS);
            long latency = at - released;
            assertThat(latency)
                    .as(env.at(w, after) + "hand-off after the outage took " + Probes.ms(latency) + "; the bound is "
                            + each.toMillis() + " ms")
                    .isLessThanOrEqualTo(each.toNanos());
            latencies.add(latency);
        }
        latencies.sort(null);
        assertThat(latencies.get(1))
                .as(env.at(w, after) + "median of 3 hand-offs after the outage (" + Probes.ms(latencies.get(0)) + ", "
                        + Probes.ms(latencies.get(1)) + ", " + Probes.ms(latencies.get(2)) + "); the bound is "
                        + median.toMillis() + " ms" + (blocking ? " (BLOCKING_WAKEUP declared)" : ""))
                .isLessThanOrEqualTo(median.toNanos());
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    /** One attempt through {@code client} that reaches the store; false while it still fails. */
    private static boolean recovered(LockClient client, String key) {
        try {
            client.lock(key).tryAcquire().ifPresent(LockLease::release);
            return true;
        } catch (LockBackendException e) {
            return false;
        }
    }

    private interface Op {
        Optional<LockLease> run() throws Exception;
    }

    /** Runs {@code op} on a thread of its own; the future yields what it threw, or null if it succeeded. */
    private Future<Throwable> attempt(Op op) {
        return env.fork(() -> {
            try {
                op.run().ifPresent(LockLease::release);
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
    }

    private void expectBackendFailure(
            LockClient a, String key, String what, Duration bound, long start, Future<Throwable> f) throws Exception {
        Throwable thrown;
        try {
            thrown = f.get(bound.toMillis() + 10_000, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError(env.at(a, key) + what + " during a store outage hangs", e);
        }
        long took = System.nanoTime() - start;
        if (!(thrown instanceof LockBackendException)) {
            fail(env.at(a, key) + what + " during a store outage must throw LockBackendException, but "
                    + (thrown == null ? "it succeeded" : "threw " + thrown));
        }
        assertThat(thrown.getCause())
                .as(env.at(a, key) + "LockBackendException carries the store's cause")
                .isNotNull();
        assertThat(took)
                .as(env.at(a, key) + what + " failed after " + Probes.ms(took) + "; the bound is operationTimeout "
                        + "+ 500 ms, x factor = " + bound.toMillis() + " ms")
                .isLessThanOrEqualTo(bound.toNanos());
    }

    /**
     * c16: after many acquire/release cycles with contention, timed-out and interrupted waiters, a released key
     * keeps no more state than after its first cycle.
     */
    public void boundedStateAfterCycles() throws Exception {
        String key = env.key("cleanup");
        LockClient a = env.client("A");
        LockClient b = env.client("B");
        int initial = env.requireStoreEntries(key);
        a.lock(key).acquire(Duration.ofSeconds(5)).release();
        int afterOne = env.storeEntries(key).getAsInt();
        int baseline = Math.max(initial, afterOne);
        for (int i = 0; i < 8; i++) {
            LockLease held = a.lock(key).acquire(Duration.ofSeconds(5));
            assertThat(b.lock(key).tryAcquire(Duration.ofMillis(20)))
                    .as(env.at(b, key) + "timed waiter")
                    .isEmpty();
            OptionalInt alone = env.storeEntries(key);
            AtomicReference<Thread> t = new AtomicReference<>();
            Future<Boolean> interrupted = env.fork(() -> {
                t.set(Thread.currentThread());
                try {
                    b.lock(key).acquire(Duration.ofSeconds(20)).release();
                    return false;
                } catch (InterruptedException e) {
                    return true;
                }
            });
            Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> t.get() != null);
            Probes.awaitQueued(env, key, alone, 1, Duration.ofMillis(30), Probes.QUEUE_SETTLE, "the waiter");
            t.get().interrupt();
            assertThat(interrupted.get(10, TimeUnit.SECONDS))
                    .as(env.at(b, key) + "interrupted waiter")
                    .isTrue();
            held.release();
        }
        List<Integer> seen = new ArrayList<>();
        Awaitility.await("c16 store entries of a released key to return to its baseline")
                .atMost(TckEnv.allow(Duration.ofSeconds(3)))
                .pollInterval(Duration.ofMillis(25))
                .untilAsserted(() -> {
                    int now = env.storeEntries(key).getAsInt();
                    seen.add(now);
                    assertThat(now)
                            .as(env.at(key) + "store entries of the released key after 8 contended cycles with "
                                    + "timed-out and interrupted waiters; after one plain cycle: " + afterOne)
                            .isLessThanOrEqualTo(baseline);
                });
        env.note("store entries of a released key", baseline);
    }

    /**
     * c16: the store-view hooks the kit's other contracts trust see the store. A hook that never moves would let
     * those contracts pass on nothing: {@code storeEntries(key)} must count more while the key is held than before,
     * {@code openConnections()} must count a newly opened and used client, and {@code storeOperations()} must grow
     * across an acquire and a release. Checks the hooks the backend's TCK class provides; skipped with none.
     */
    public void hooksSeeTheStore() throws Exception {
        boolean entries = env.storeEntries("probe").isPresent();
        boolean connections = env.openConnections().isPresent();
        boolean operations = env.storeOperations().isPresent();
        org.junit.jupiter.api.Assumptions.assumeTrue(
                entries || connections || operations,
                "no store-view hook to check (storeEntries, openConnections, storeOperations are all empty)");
        int connectionsBefore = connections ? env.requireOpenConnections() : 0;
        LockClient a = env.client("A");
        String key = env.key("hooks");
        int entriesBefore = entries ? env.requireStoreEntries(key) : 0;
        long operationsBefore = operations ? env.requireStoreOperations() : 0;
        try (LockLease lease = a.lock(key).acquire(TckEnv.allow(env.timings().operationTimeout()))) {
            if (entries) {
                int held = env.requireStoreEntries(key);
                assertThat(held)
                        .as(env.at(a, key) + "storeEntries(key) while the key is held (" + entriesBefore
                                + " before): the hook does not see the store's records of the key")
                        .isGreaterThan(entriesBefore);
            }
            if (connections) {
                int open = env.requireOpenConnections();
                assertThat(open)
                        .as(env.at(a, key) + "openConnections() once a new client acquired (" + connectionsBefore
                                + " before it was opened): the hook does not count the clients' connections")
                        .isGreaterThan(connectionsBefore);
            }
        }
        if (operations) {
            long after = env.requireStoreOperations();
            assertThat(after)
                    .as(env.at(a, key) + "storeOperations() after an acquire and a release (" + operationsBefore
                            + " before): the hook does not count the store's requests")
                    .isGreaterThan(operationsBefore);
        }
    }
}
