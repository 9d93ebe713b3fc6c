package org.locksmith.lock.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Function;

/**
 * Runs the whole comparison and writes {@code benchmarks.md} with its PNG charts.
 *
 * <pre>
 * BenchMain [--out=DIR] [--plan=full|smoke] [--only=name,name] [--scenarios=S1,S3]
 * </pre>
 *
 * <p>Defaults: {@code --out=target/bench}, the full plan, every contender and scenario. The published run is {@code
 * ./mvnw -B -pl lock-bench -Pbench verify}, which writes to {@code docs/}. A scenario that finds mutual exclusion
 * broken (S3's counter) fails the run with a non-zero status; a target missed is reported, not a failure.
 */
public final class BenchMain {
    private BenchMain() {}

    public static void main(String[] args) throws Exception {
        System.setProperty("java.awt.headless", "true");
        Path out = Path.of("target/bench");
        BenchPlan plan = BenchPlan.full();
        List<Contender> contenders = new ArrayList<>(Contenders.all());
        Set<Scenario> scenarios = EnumSet.allOf(Scenario.class);
        for (String arg : args) {
            if (arg.startsWith("--out=")) {
                out = Path.of(arg.substring("--out=".length()));
            } else if (arg.equals("--plan=smoke")) {
                plan = BenchPlan.smoke();
            } else if (arg.equals("--plan=full")) {
                plan = BenchPlan.full();
            } else if (arg.startsWith("--only=")) {
                contenders.clear();
                for (String name : arg.substring("--only=".length()).split(",")) {
                    contenders.add(Contenders.byName(name.trim()));
                }
            } else if (arg.startsWith("--scenarios=")) {
                scenarios.clear();
                for (String s : arg.substring("--scenarios=".length()).split(",")) {
                    scenarios.add(Scenario.valueOf(s.trim().toUpperCase(Locale.ROOT)));
                }
            } else {
                System.err.println("Unknown argument " + arg
                        + "; use --out=DIR --plan=full|smoke --only=name,name --scenarios=S1,S2,...");
                System.exit(2);
            }
        }
        run(plan, contenders, scenarios, out);
    }

    /** Runs {@code scenarios} for {@code contenders} and writes the report and charts under {@code out}. */
    public static Results run(BenchPlan plan, List<Contender> contenders, Set<Scenario> scenarios, Path out)
            throws Exception {
        long started = System.nanoTime();
        String loadBefore = Environment.load();
        Results results = new Results();
        List<String> servers;
        try (Stores stores = Stores.start()) {
            log("stores: " + stores + "; run " + stores.runId() + ", plan " + plan.name());
            servers = stores.serverVersions();
            try {
                results.floors.addAll(Floors.measure(stores, plan));
                results.floors.forEach(f -> log(String.format(
                        Locale.ROOT, "floor %s %s: p50 %.1f us", f.store().title(), f.operation(), f.p50Micros())));
                if (scenarios.contains(Scenario.S1)) {
                    List<Contender> s1 = applicable(contenders, Scenario.S1, results);
                    if (!s1.isEmpty()) {
                        log("S1 under JMH for " + s1.size() + " contenders");
                        results.uncontended.addAll(Uncontended.run(s1, stores, plan));
                        results.uncontended.sort((a, b) -> Integer.compare(
                                contenders.indexOf(Contenders.byName(a.contender())),
                                contenders.indexOf(Contenders.byName(b.contender()))));
                        results.uncontended.forEach(u -> log(String.format(
                                Locale.ROOT,
                                "S1 %s: %.0f ops/s, p50 %.1f us, p99 %.1f us",
                                u.contender(),
                                u.opsPerSecond(),
                                u.p50Micros(),
                                u.p99Micros())));
                        if (s1.stream().anyMatch(c -> c.name().equals("locksmith-redis"))) {
                            Results.ClientShare share = ClientShare.redis(stores, plan);
                            results.clientShare.add(share);
                            log(String.format(
                                    Locale.ROOT,
                                    "S1 client share, interleaved: locksmith-redis pair p50 %.1f us, the same two"
                                            + " scripts %.1f us, two EVALSHA of return 1 %.1f us",
                                    share.pairP50Micros(),
                                    share.scriptsP50Micros(),
                                    share.trivialP50Micros()));
                        }
                    }
                }
                for (Contender c : contenders) {
                    Step step = new Step(c, stores, plan, scenarios, results);
                    step.run(Scenario.S2, Parallel::run, results.parallel, p -> fmt("%.0f ops/s", p.opsPerSecond()));
                    step.run(
                            Scenario.S3,
                            Contended::run,
                            results.contended,
                            r -> fmt(
                                    "%.0f grants/s, wait p99 %.2f ms, fairness %.2f",
                                    r.grantsPerSecond(), r.p99WaitMillis(), r.fairness()));
                    step.run(
                            Scenario.S4,
                            Handoff::run,
                            results.handoff,
                            h -> fmt(
                                    "p50 %.0f us, p99 %.0f us (%d hand-offs)",
                                    h.p50Micros(), h.p99Micros(), h.handoffs()));
                    step.run(
                            Scenario.S5,
                            Reentry::run,
                            results.reentry,
                            e -> fmt(
                                    "%.2f commands per re-entrant acquire, %.2f per release",
                                    e.acquireCommands(), e.releaseCommands()));
                    step.run(
                            Scenario.S6,
                            ManyLeases::run,
                            results.manyLeases,
                            m -> fmt(
                                    "%.2f commands per 100 leases per period, %.0f B heap per lease",
                                    m.commandsPer100LeasesPerPeriod(), m.heapBytesPerLease()));
                }
            } finally {
                stores.removeRunState();
            }
        }
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        Report.write(
                results,
                new Report.Context(plan, servers, loadBefore, Environment.load(), took, contenders),
                out.resolve("benchmarks.md"));
        Charts.write(results, out);
        log("wrote " + out.resolve("benchmarks.md") + " and its charts in " + took.toSeconds() + " s");
        Targets.evaluate(results)
                .forEach(t ->
                        log("target [" + t.verdict() + "] " + t.store() + ": " + t.goal() + " -- " + t.measured()));
        return results;
    }

    /** One scenario's harness: runs one contender, returns its result. */
    private interface Harness<R> {
        R run(Contender contender, Stores stores, BenchPlan plan) throws Exception;
    }

    /** Runs the scenarios of one contender that were asked for and apply to it, recording and logging each. */
    private record Step(Contender c, Stores stores, BenchPlan plan, Set<Scenario> scenarios, Results results) {
        <R> void run(Scenario scenario, Harness<R> harness, List<R> into, Function<R, String> describe)
                throws Exception {
            if (scenarios.contains(scenario) && applies(c, scenario, results)) {
                R result = harness.run(c, stores, plan);
                into.add(result);
                log(scenario + " " + c.name() + ": " + describe.apply(result));
            }
        }
    }

    private static String fmt(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }

    private static List<Contender> applicable(List<Contender> contenders, Scenario scenario, Results results) {
        return contenders.stream().filter(c -> applies(c, scenario, results)).toList();
    }

    private static boolean applies(Contender c, Scenario scenario, Results results) {
        String reason = c.notApplicable(scenario);
        if (reason != null) {
            if (results.notApplicable(c.name(), scenario).isEmpty()) {
                results.notApplicable.add(new Results.NotApplicable(c.name(), scenario, reason));
            }
            return false;
        }
        return true;
    }

    private static void log(String line) {
        System.out.println("[bench] " + line);
    }
}
