package org.locksmith.lock.bench;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/** S2: eight threads of one client, each acquiring and releasing its own key as fast as it can. */
final class Parallel {
    static final int THREADS = 8;

    private Parallel() {}

    static Results.Parallel run(Contender contender, Stores stores, BenchPlan plan) throws Exception {
        try (Contender.Client client = contender.open(stores, null)) {
            AtomicBoolean stop = new AtomicBoolean();
            LongAdder ops = new LongAdder();
            Workers workers = new Workers("s2-" + contender.name(), THREADS, i -> {
                        Contender.Handle handle = client.handle("s2-" + i);
                        while (!stop.get()) {
                            handle.lock();
                            handle.unlock();
                            ops.increment();
                        }
                    })
                    .start();
            try {
                var rates = Rounds.rates(plan, workers, ops::sum, () -> {});
                return new Results.Parallel(contender.name(), Rounds.median(rates), rates);
            } finally {
                stop.set(true);
                workers.join(60);
            }
        }
    }
}
