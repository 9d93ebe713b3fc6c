package org.locksmith.lock.bench;

/**
 * S5: store commands per re-entrant acquire and per re-entrant release, counted by the store (see {@link
 * StoreCommands}) while one thread re-enters a key it holds.
 */
final class Reentry {
    private static final int RUNS = 3;

    private Reentry() {}

    static Results.Reentry run(Contender contender, Stores stores, BenchPlan plan) throws Exception {
        try (Contender.Client client = contender.open(stores, null);
                StoreCommands commands = StoreCommands.of(contender.store(), stores)) {
            Contender.Handle handle = client.handle("s5");
            handle.lock();
            try {
                long acquires = commands.count(RUNS, () -> {
                    for (int i = 0; i < plan.reentries(); i++) {
                        handle.lock();
                    }
                });
                long releases = commands.count(RUNS, () -> {
                    for (int i = 0; i < plan.reentries(); i++) {
                        handle.unlock();
                    }
                });
                return new Results.Reentry(
                        contender.name(), (double) acquires / plan.reentries(), (double) releases / plan.reentries());
            } finally {
                handle.unlock();
            }
        }
    }
}
