package org.locksmith.lock.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/** Samples a running counter over a warm-up and then a number of equal rounds; the median round is the result. */
final class Rounds {
    private Rounds() {}

    /** Per-second rates of {@code counter} over each measured round; {@code workers} are checked between rounds. */
    static List<Double> rates(BenchPlan plan, Workers workers, LongSupplier counter, Runnable atMeasureStart)
            throws InterruptedException {
        TimeUnit.NANOSECONDS.sleep(plan.warmup().toNanos()); // the warm-up's length, not a wait for a condition
        workers.check();
        atMeasureStart.run();
        List<Double> rates = new ArrayList<>();
        long count = counter.getAsLong();
        long at = System.nanoTime();
        for (int i = 0; i < plan.rounds(); i++) {
            TimeUnit.NANOSECONDS.sleep(plan.roundTime().toNanos());
            workers.check();
            long nowCount = counter.getAsLong();
            long now = System.nanoTime();
            rates.add((nowCount - count) * 1e9 / (now - at));
            count = nowCount;
            at = now;
        }
        return rates;
    }

    static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(null);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }
}
