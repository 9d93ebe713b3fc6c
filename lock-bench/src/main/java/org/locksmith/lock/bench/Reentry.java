package org.locksmith.lock.bench;

import java.sql.Connection;

/**
 * S5: store commands per re-entrant acquire and per re-entrant release, counted by the store (see {@link
 * StoreCommands}) while one thread re-enters a key it holds. Beside them, what a first acquire and its release cost
 * (commands, and on MySQL the InnoDB fsyncs the server made), which is what S1 measures in time: the figures a
 * latency is read against. On PostgreSQL the scenario runs but counts nothing ({@code NaN}: {@link
 * StoreCommands#NOT_COUNTED_ON_POSTGRES}).
 */
final class Reentry {
    private static final int RUNS = 3;

    private Reentry() {}

    static Results.Reentry run(Contender contender, Stores stores, BenchPlan plan) throws Exception {
        try (Contender.Client client = contender.open(stores, null);
                StoreCommands commands = StoreCommands.of(contender.store(), stores)) {
            Contender.Handle handle = client.handle("s5");
            handle.lock(); // warms up the key and the client's connections
            handle.unlock();
            int pairs = plan.reentries();
            StoreCommands.Op cycle = () -> {
                for (int i = 0; i < pairs; i++) {
                    handle.lock();
                    handle.unlock();
                }
            };
            double pairCommands = commands.count(RUNS, cycle) / pairs;
            double pairFsyncs = contender.store() == StoreKind.MYSQL ? logFsyncs(stores, cycle) / pairs : Double.NaN;
            handle.lock();
            try {
                double acquires = commands.count(RUNS, () -> {
                    for (int i = 0; i < plan.reentries(); i++) {
                        handle.lock();
                    }
                });
                double releases = commands.count(RUNS, () -> {
                    for (int i = 0; i < plan.reentries(); i++) {
                        handle.unlock();
                    }
                });
                return new Results.Reentry(
                        contender.name(),
                        acquires / plan.reentries(),
                        releases / plan.reentries(),
                        pairCommands,
                        pairFsyncs);
            } finally {
                handle.unlock();
            }
        }
    }

    /** InnoDB fsyncs (redo log and data files) the whole server made while {@code op} ran (run nothing else against it). */
    private static double logFsyncs(Stores stores, StoreCommands.Op op) throws Exception {
        try (Connection c = stores.mysqlConnection()) {
            long before = StoreCommands.mysqlStatus(c, "Innodb_data_fsyncs");
            op.run();
            return StoreCommands.mysqlStatus(c, "Innodb_data_fsyncs") - before;
        }
    }
}
