package org.locksmith.lock.tck.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import org.awaitility.Awaitility;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;

/** Contract 12: with FAIR, waiters are granted in the order they started waiting. */
public final class FairnessContract {
    private final TckEnv env;

    public FairnessContract(TckEnv env) {
        this.env = env;
    }

    public void arrivalOrder() throws Exception {
        grantedInArrivalOrder("fair", 5, "(FAIR declared)");
    }

    /**
     * Holds a key, queues {@code waiters} clients one after another (each seen queued before the next arrives),
     * releases, and checks they were granted in arrival order.
     */
    private void grantedInArrivalOrder(String keyName, int waiters, String why) throws Exception {
        LockClient holder = env.client("H");
        String key = env.key(keyName);
        List<LockClient> clients = new ArrayList<>();
        for (int i = 0; i < waiters; i++) {
            clients.add(env.client("W" + i));
        }
        LockLease held = holder.lock(key).acquire(Duration.ofSeconds(5));
        List<Integer> order = Collections.synchronizedList(new ArrayList<>());
        List<Future<Void>> futures = new ArrayList<>();
        OptionalInt base = env.storeEntries(key);
        for (int i = 0; i < waiters; i++) {
            int index = i;
            LockClient c = clients.get(i);
            futures.add(env.fork(() -> {
                try (LockLease l = c.lock(key).acquire(Duration.ofSeconds(30))) {
                    order.add(index);
                }
                return null;
            }));
            // Arrival order must be unambiguous: wait until the store shows this waiter queued where it can be
            // seen; otherwise give it a fixed head start before the next one arrives.
            queued(key, base, i + 1);
        }
        held.release();
        for (Future<Void> f : futures) {
            f.get(TckEnv.allow(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);
        }
        List<Integer> expected = new ArrayList<>();
        for (int i = 0; i < waiters; i++) {
            expected.add(i);
        }
        assertThat(order)
                .as(env.at(holder, key) + "grant order of " + waiters + " waiters W0..W" + (waiters - 1)
                        + " that arrived in that order " + why)
                .containsExactlyElementsOf(expected);
    }

    /**
     * With FAIR, {@code asLock().lock()}, which is not interruptible, keeps its place in the queue when interrupted:
     * it waits on in the same request, ahead of a waiter that arrived after it.
     */
    public void lockKeepsItsPlaceThroughInterrupts() throws Exception {
        LockClient holder = env.client("H");
        LockClient first = env.client("W0");
        LockClient second = env.client("W1");
        String key = env.key("fair-uninterruptible");
        LockLease held = holder.lock(key).acquire(Duration.ofSeconds(5));
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        AtomicReference<Thread> firstThread = new AtomicReference<>();
        OptionalInt base = env.storeEntries(key);
        Future<Boolean> w0 = env.fork(() -> {
            firstThread.set(Thread.currentThread());
            Lock lock = first.lock(key).asLock();
            lock.lock();
            boolean interrupted = Thread.interrupted();
            order.add("W0");
            lock.unlock();
            return interrupted;
        });
        queued(key, base, 1);
        Future<Void> w1 = env.fork(() -> {
            try (LockLease l = second.lock(key).acquire(Duration.ofSeconds(30))) {
                order.add("W1");
            }
            return null;
        });
        queued(key, base, 2);
        firstThread.get().interrupt();
        Probes.quietPeriod(Duration.ofMillis(100), "W0 keeps its place through a first interrupt");
        firstThread.get().interrupt();
        Probes.quietPeriod(Duration.ofMillis(200), "W0 keeps its place through a second interrupt");
        held.release();
        Boolean interrupted = w0.get(TckEnv.allow(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);
        w1.get(TckEnv.allow(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(order)
                .as(env.at(holder, key) + "grant order of W0 (asLock().lock(), interrupted twice while queued) and W1"
                        + " (acquire, arrived after W0), FAIR declared")
                .containsExactly("W0", "W1");
        assertThat(interrupted)
                .as(env.at(first, key) + "interrupt status when the interrupted asLock().lock() returned")
                .isTrue();
    }

    /** Waits until the store shows {@code n} waiters queued, or 150 ms without the hook, and 20 ms more. */
    private void queued(String key, OptionalInt base, int n) throws InterruptedException {
        if (base.isPresent()) {
            int expected = base.getAsInt() + n;
            Awaitility.await()
                    .atMost(Duration.ofSeconds(5))
                    .pollInterval(Duration.ofMillis(5))
                    .until(() -> env.storeEntries(key).orElse(expected) >= expected);
            Probes.quietPeriod(Duration.ofMillis(20), "from the store's record of waiter " + n + " to its wait");
        } else {
            Probes.quietPeriod(Duration.ofMillis(150), "no store view: the head start of waiter " + n);
        }
    }

    /** Waiters of {@link #arrivalOrderOfADozen}: more than a small fixed queue holds. */
    static final int DOZEN = 12;

    /**
     * C12.3: the arrival order of C12.1 with {@value #DOZEN} waiters: a queue that keeps only a few places and lets
     * the others in some other order passes with five.
     */
    public void arrivalOrderOfADozen() throws Exception {
        grantedInArrivalOrder("fair-dozen", DOZEN, "(FAIR declared; a queue must keep its order past a few places)");
    }
}
