package org.locksmith.lock.bench;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.HdrHistogram.Histogram;

/**
 * S4: two clients pass one key back and forth. The holder tells the other client to acquire, gives it {@link
 * BenchPlan#handoffSettle()} to block in the store, notes the time and releases; the other client notes the time its
 * acquire returns. The difference is the hand-off: what a waiter loses between a release and its grant.
 */
final class Handoff {
    private Handoff() {}

    static Results.Handoff run(Contender contender, Stores stores, BenchPlan plan) throws Exception {
        try (Contender.Client a = contender.open(stores, null);
                Contender.Client b = contender.open(stores, null)) {
            Contender.Handle[] handles = {a.handle("s4"), b.handle("s4")};
            Semaphore[] yourTurn = {new Semaphore(0), new Semaphore(0)};
            Histogram handoffs = new Histogram(3);
            AtomicInteger granted = new AtomicInteger();
            AtomicBoolean done = new AtomicBoolean();
            long[] releasedAt = new long[1];
            Object clock = new Object();
            long budgetEnd = System.nanoTime() + plan.handoffBudget().toNanos();
            int total = plan.handoffWarmup() + plan.handoffs();
            Workers workers = new Workers("s4-" + contender.name(), 2, k -> {
                        Contender.Handle mine = handles[k];
                        if (k == 0) {
                            mine.lock();
                            passOn(mine, yourTurn[1], plan, releasedAt, clock);
                        }
                        while (true) {
                            if (!yourTurn[k].tryAcquire(60, TimeUnit.SECONDS)) {
                                throw new IllegalStateException("S4 stalled: no turn for client " + k + " in 60 s");
                            }
                            if (done.get()) {
                                return;
                            }
                            mine.lock();
                            long now = System.nanoTime();
                            long released;
                            synchronized (clock) {
                                released = releasedAt[0];
                            }
                            int n = granted.incrementAndGet();
                            if (n > plan.handoffWarmup()) {
                                handoffs.recordValue(now - released);
                            }
                            if (n >= total || now > budgetEnd) {
                                done.set(true);
                                yourTurn[1 - k].release();
                                mine.unlock();
                                return;
                            }
                            passOn(mine, yourTurn[1 - k], plan, releasedAt, clock);
                        }
                    })
                    .start();
            workers.join(plan.handoffBudget().toSeconds() + 90);
            return new Results.Handoff(
                    contender.name(),
                    handoffs.getValueAtPercentile(50) / 1e3,
                    handoffs.getValueAtPercentile(99) / 1e3,
                    handoffs.getTotalCount());
        }
    }

    private static void passOn(
            Contender.Handle mine, Semaphore otherTurn, BenchPlan plan, long[] releasedAt, Object clock)
            throws Exception {
        otherTurn.release();
        TimeUnit.NANOSECONDS.sleep(plan.handoffSettle().toNanos()); // time for the other client to block
        synchronized (clock) {
            releasedAt[0] = System.nanoTime();
        }
        mine.unlock();
    }
}
