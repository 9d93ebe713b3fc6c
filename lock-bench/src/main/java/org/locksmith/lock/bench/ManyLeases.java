package org.locksmith.lock.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * S6: one client acquires {@link BenchPlan#leases()} distinct keys (eight threads, each releasing its own), holds
 * them for three lease periods while the store counts the commands spent keeping them, then releases them. Heap per
 * lease is the growth of the used heap after a full collection, divided by the leases held. A lease whose release
 * fails (an implementation that could not keep every lease alive reports it there) is counted as lost, not thrown:
 * the table shows it beside the cost, since a cheap renewal that loses leases is no result.
 */
final class ManyLeases {
    private static final int THREADS = 8;

    private ManyLeases() {}

    static Results.ManyLeases run(Contender contender, Stores stores, BenchPlan plan) throws Exception {
        try (Contender.Client client = contender.open(stores, plan.s6Lease());
                StoreCommands commands = StoreCommands.of(contender.store(), stores)) {
            Contender.Handle warm = client.handle("s6-warm");
            warm.lock();
            warm.unlock();
            long heapBefore = usedHeapAfterGc();
            CountDownLatch acquired = new CountDownLatch(THREADS);
            CountDownLatch release = new CountDownLatch(1);
            AtomicInteger lost = new AtomicInteger();
            long start = System.nanoTime();
            Workers workers = new Workers("s6-" + contender.name(), THREADS, t -> {
                        List<Contender.Handle> held = new ArrayList<>();
                        try {
                            for (int i = t; i < plan.leases(); i += THREADS) {
                                Contender.Handle h = client.handle("s6-" + i);
                                h.lock();
                                held.add(h);
                            }
                        } finally {
                            acquired.countDown();
                        }
                        if (!release.await(10, TimeUnit.MINUTES)) {
                            throw new IllegalStateException("S6 never released");
                        }
                        for (Contender.Handle h : held) {
                            try {
                                h.unlock();
                            } catch (RuntimeException e) {
                                if (lost.getAndIncrement() == 0) {
                                    System.out.println("[bench] S6 " + contender.name() + ": a lease was lost: " + e);
                                }
                            }
                        }
                    })
                    .start();
            double acquireSeconds;
            long heapHeld;
            double perPeriod;
            try {
                if (!acquired.await(10, TimeUnit.MINUTES)) {
                    throw new IllegalStateException(
                            contender.name() + " did not acquire " + plan.leases() + " leases within 10 minutes");
                }
                workers.check();
                acquireSeconds = (System.nanoTime() - start) / 1e9;
                heapHeld = usedHeapAfterGc();
                long windowStart = System.nanoTime();
                double commandsHeld = commands.count(1, () -> {
                    // the three lease periods measured
                    TimeUnit.NANOSECONDS.sleep(plan.s6Lease().toNanos() * 3);
                });
                perPeriod = commandsHeld
                        / ((System.nanoTime() - windowStart)
                                / (double) plan.s6Lease().toNanos());
            } finally {
                release.countDown();
                workers.join(600); // the releases, whose failures are the leases lost
            }
            return new Results.ManyLeases(
                    contender.name(),
                    plan.leases(),
                    plan.s6Lease().toMillis() / 1e3,
                    perPeriod,
                    perPeriod / (plan.leases() / 100.0),
                    Math.max(0, heapHeld - heapBefore) / (double) plan.leases(),
                    acquireSeconds,
                    lost.get());
        }
    }

    private static long usedHeapAfterGc() throws InterruptedException {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        for (int i = 0; i < 3; i++) {
            System.gc();
            TimeUnit.MILLISECONDS.sleep(50); // lets reference processing settle between collections
        }
        return memory.getHeapMemoryUsage().getUsed();
    }
}
