package org.locksmith.lock.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The performance targets of the benchmark issue, each checked against this run's numbers. A target whose inputs
 * were not measured (a contender left out with {@code --only}) is reported as such, never as met.
 */
final class Targets {

    /**
     * One target: what it asks, what was measured, whether it holds ({@code null}: not measured). {@code
     * unmeasurable}: the store offers no way to measure it, which is not the same as a contender left out.
     */
    record Target(String store, String goal, String measured, Boolean met, boolean unmeasurable) {
        Target(String store, String goal, String measured, Boolean met) {
            this(store, goal, measured, met, false);
        }

        String verdict() {
            return unmeasurable ? "n/a" : met == null ? "not measured" : met ? "met" : "MISSED";
        }
    }

    private Targets() {}

    static List<Target> evaluate(Results r) {
        List<Target> targets = new ArrayList<>();
        // Redis
        ratio(
                targets,
                "Redis",
                "S1 ops/s ≥ 1.3× Redisson RLock",
                1.3,
                true,
                r.uncontended("locksmith-redis").map(Results.Uncontended::opsPerSecond),
                r.uncontended("redisson-rlock").map(Results.Uncontended::opsPerSecond),
                "%.0f ops/s");
        ratio(
                targets,
                "Redis",
                "S1 p50 ≤ 2.3× the EVALSHA floor",
                2.3,
                false,
                r.uncontended("locksmith-redis").map(Results.Uncontended::p50Micros),
                r.uncontended("locksmith-redis").map(Results.Uncontended::floorP50Micros),
                "%.1f µs");
        ratio(
                targets,
                "Redis",
                "S1 pair p50 ≤ 1.1× the same two EVALSHA, interleaved",
                1.1,
                false,
                r.clientShare("locksmith-redis").map(Results.ClientShare::pairP50Micros),
                r.clientShare("locksmith-redis").map(Results.ClientShare::scriptsP50Micros),
                "%.1f µs");
        ratio(
                targets,
                "Redis",
                "S3 grants/s ≥ 2× Redisson RLock",
                2,
                true,
                r.contended("locksmith-redis").map(Results.Contended::grantsPerSecond),
                r.contended("redisson-rlock").map(Results.Contended::grantsPerSecond),
                "%.0f grants/s");
        bound(
                targets,
                "Redis",
                "S3 fairness ≤ 1.3",
                1.3,
                r.contended("locksmith-redis").map(Results.Contended::fairness),
                "%.2f");
        ratio(
                targets,
                "Redis",
                "S4 p50 ≤ 0.5× Redisson RLock",
                0.5,
                false,
                r.handoff("locksmith-redis").map(Results.Handoff::p50Micros),
                r.handoff("redisson-rlock").map(Results.Handoff::p50Micros),
                "%.0f µs");
        // ZooKeeper
        ratio(
                targets,
                "ZooKeeper",
                "S1 ops/s ≥ 1.0× Curator InterProcessMutex",
                1.0,
                true,
                r.uncontended("locksmith-zookeeper").map(Results.Uncontended::opsPerSecond),
                r.uncontended("curator-mutex").map(Results.Uncontended::opsPerSecond),
                "%.0f ops/s");
        ratio(
                targets,
                "ZooKeeper",
                "S4 p50 ≤ Curator InterProcessMutex",
                1.0,
                false,
                r.handoff("locksmith-zookeeper").map(Results.Handoff::p50Micros),
                r.handoff("curator-mutex").map(Results.Handoff::p50Micros),
                "%.0f µs");
        // MySQL
        ratio(
                targets,
                "MySQL",
                "S1 (row) ops/s ≥ 2× Spring JdbcLockRegistry",
                2,
                true,
                r.uncontended("locksmith-mysql-row").map(Results.Uncontended::opsPerSecond),
                r.uncontended("spring-jdbc").map(Results.Uncontended::opsPerSecond),
                "%.0f ops/s");
        bound(
                targets,
                "MySQL",
                "S4 (row) p50 ≤ 2 ms",
                2000,
                r.handoff("locksmith-mysql-row").map(Results.Handoff::p50Micros),
                "%.0f µs");
        // PostgreSQL
        ratio(
                targets,
                "PostgreSQL",
                "S1 ops/s ≥ 2× Spring JdbcLockRegistry",
                2,
                true,
                r.uncontended("locksmith-postgres").map(Results.Uncontended::opsPerSecond),
                r.uncontended("spring-jdbc-postgres").map(Results.Uncontended::opsPerSecond),
                "%.0f ops/s");
        ratio(
                targets,
                "PostgreSQL",
                "S1 ops/s ≥ 2× ShedLock JDBC",
                2,
                true,
                r.uncontended("locksmith-postgres").map(Results.Uncontended::opsPerSecond),
                r.uncontended("shedlock-jdbc").map(Results.Uncontended::opsPerSecond),
                "%.0f ops/s");
        bound(
                targets,
                "PostgreSQL",
                "S4 p50 ≤ 2 ms",
                2000,
                r.handoff("locksmith-postgres").map(Results.Handoff::p50Micros),
                "%.0f µs");
        // S5 and S6, every Locksmith backend
        for (Contender c : Contenders.all()) {
            if (!c.ours()) {
                continue;
            }
            Optional<Results.Reentry> reentry = r.reentry(c.name());
            if (!StoreCommands.counted(c.store())) {
                targets.add(new Target(
                        c.store().title(),
                        "S5 " + c.name() + ": 0 store commands per re-entrant acquire and release",
                        "not countable (see S5)",
                        null,
                        true));
                continue;
            }
            targets.add(new Target(
                    c.store().title(),
                    "S5 " + c.name() + ": 0 store commands per re-entrant acquire and release",
                    reentry.map(e -> fmt("%.3f", e.acquireCommands()) + " / " + fmt("%.3f", e.releaseCommands()))
                            .orElse("—"),
                    reentry.map(e -> e.acquireCommands() == 0 && e.releaseCommands() == 0)
                            .orElse(null)));
        }
        bound(
                targets,
                "Redis",
                "S6 renewal ≤ 1 command per 100 leases per period",
                1,
                r.manyLeases("locksmith-redis").map(Results.ManyLeases::commandsPer100LeasesPerPeriod),
                "%.2f");
        for (Contender c : Contenders.all()) {
            if (c.ours() && c.notApplicable(Scenario.S6) == null) {
                bound(
                        targets,
                        c.store().title(),
                        "S6 " + c.name() + ": heap < 2 KiB per held lease",
                        2047,
                        r.manyLeases(c.name()).map(Results.ManyLeases::heapBytesPerLease),
                        "%.0f B");
                Optional<Results.ManyLeases> held = r.manyLeases(c.name());
                targets.add(new Target(
                        c.store().title(),
                        "S6 " + c.name() + ": no held lease lost",
                        held.map(m -> m.leasesLost() + " lost").orElse("—"),
                        held.map(m -> m.leasesLost() == 0).orElse(null)));
            }
        }
        return targets;
    }

    private static void ratio(
            List<Target> targets,
            String store,
            String goal,
            double factor,
            boolean atLeast,
            Optional<Double> ours,
            Optional<Double> theirs,
            String format) {
        if (ours.isEmpty() || theirs.isEmpty()) {
            targets.add(new Target(store, goal, "—", null));
            return;
        }
        double ratio = ours.get() / theirs.get();
        boolean met = atLeast ? ratio >= factor : ratio <= factor;
        targets.add(new Target(
                store,
                goal,
                fmt(format, ours.get()) + " vs " + fmt(format, theirs.get()) + " = " + fmt("%.2f×", ratio),
                met));
    }

    private static void bound(
            List<Target> targets, String store, String goal, double max, Optional<Double> value, String format) {
        targets.add(new Target(
                store,
                goal,
                value.map(v -> fmt(format, v)).orElse("—"),
                value.map(v -> v <= max).orElse(null)));
    }

    static String fmt(String format, double value) {
        return String.format(Locale.ROOT, format, value);
    }
}
