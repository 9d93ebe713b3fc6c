package org.locksmith.lock.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * S3: eight clients — each with its own connections, as eight processes would have — acquire and release one key
 * with no work inside. Inside the critical section each grant increments a shared counter with a plain
 * read-then-write: if two clients ever held the key at once, increments would be lost and the count would fall short
 * of the grants, which fails the run.
 */
final class Contended {
    static final int CLIENTS = 8;

    /** Read and written only inside the lock: non-atomic on purpose. */
    private static volatile long unprotectedCounter;

    private Contended() {}

    static Results.Contended run(Contender contender, Stores stores, BenchPlan plan) throws Exception {
        List<Contender.Client> clients = new ArrayList<>();
        try {
            for (int i = 0; i < CLIENTS; i++) {
                clients.add(contender.open(stores, null));
            }
            unprotectedCounter = 0;
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLongArray grants = new AtomicLongArray(CLIENTS);
            Recorder waits = new Recorder(3);
            Workers workers = new Workers("s3-" + contender.name(), CLIENTS, i -> {
                        Contender.Handle handle = clients.get(i).handle("s3");
                        while (!stop.get()) {
                            long start = System.nanoTime();
                            handle.lock();
                            waits.recordValue(System.nanoTime() - start);
                            long seen = unprotectedCounter;
                            unprotectedCounter = seen + 1;
                            grants.incrementAndGet(i);
                            handle.unlock();
                        }
                    })
                    .start();
            long[] atStart = new long[CLIENTS];
            List<Double> rates;
            Histogram measuredWaits;
            try {
                rates = Rounds.rates(plan, workers, () -> sum(grants), () -> {
                    waits.getIntervalHistogram(); // drops the warm-up's waits
                    for (int i = 0; i < CLIENTS; i++) {
                        atStart[i] = grants.get(i);
                    }
                });
                measuredWaits = waits.getIntervalHistogram();
            } finally {
                stop.set(true);
                workers.join(90);
            }
            long most = 0;
            long fewest = Long.MAX_VALUE;
            for (int i = 0; i < CLIENTS; i++) {
                long measured = grants.get(i) - atStart[i];
                most = Math.max(most, measured);
                fewest = Math.min(fewest, measured);
            }
            long total = sum(grants);
            if (unprotectedCounter != total) {
                throw new IllegalStateException(contender.name() + " broke mutual exclusion in S3: the counter"
                        + " incremented inside the lock reads " + unprotectedCounter + " after " + total + " grants");
            }
            return new Results.Contended(
                    contender.name(),
                    Rounds.median(rates),
                    rates,
                    measuredWaits.getValueAtPercentile(50) / 1e6,
                    measuredWaits.getValueAtPercentile(99) / 1e6,
                    fewest == 0 ? Double.POSITIVE_INFINITY : (double) most / fewest,
                    total);
        } finally {
            for (Contender.Client client : clients) {
                client.close();
            }
        }
    }

    private static long sum(AtomicLongArray values) {
        long sum = 0;
        for (int i = 0; i < values.length(); i++) {
            sum += values.get(i);
        }
        return sum;
    }
}
