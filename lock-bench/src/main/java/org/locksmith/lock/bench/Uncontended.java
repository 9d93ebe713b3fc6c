package org.locksmith.lock.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;
import org.openjdk.jmh.util.Statistics;

/**
 * Runs S1 ({@link UncontendedBenchmark}) under JMH, one contender after another, each right after a fresh measure of
 * its store's floor, and reads the sampled distribution.
 */
final class Uncontended {
    private Uncontended() {}

    static List<Results.Uncontended> run(List<Contender> contenders, Stores stores, BenchPlan plan) throws Exception {
        List<String> jvmArgs = new ArrayList<>(List.of("-Xmx512m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"));
        for (Map.Entry<String, String> p : stores.systemProperties().entrySet()) {
            jvmArgs.add("-D" + p.getKey() + "=" + p.getValue());
            System.setProperty(p.getKey(), p.getValue()); // for forks(0): the benchmark runs in this JVM
        }
        List<Results.Uncontended> results = new ArrayList<>();
        for (Contender contender : contenders) {
            // The floor right before the contender's turn: this machine's loopback latency drifts by 2-3x over
            // minutes, so a floor from the start of the run is no yardstick for a contender measured later.
            Results.Floor floor = Floors.natural(contender.store(), stores, plan);
            ChainedOptionsBuilder options = new OptionsBuilder()
                    .include(UncontendedBenchmark.class.getName())
                    .param("contender", contender.name())
                    .forks(plan.s1Forks())
                    .warmupIterations(plan.s1Warmups())
                    .warmupTime(TimeValue.milliseconds(plan.s1WarmupTime().toMillis()))
                    .measurementIterations(plan.s1Iterations())
                    .measurementTime(
                            TimeValue.milliseconds(plan.s1IterationTime().toMillis()))
                    .timeUnit(TimeUnit.MICROSECONDS)
                    .shouldFailOnError(true)
                    .verbosity(VerboseMode.SILENT)
                    .jvmArgsAppend(jvmArgs.toArray(String[]::new));
            for (RunResult run : new Runner(options.build()).run()) {
                Statistics s = run.getPrimaryResult().getStatistics();
                results.add(new Results.Uncontended(
                        contender.name(),
                        1e6 / s.getMean(),
                        s.getPercentile(50),
                        s.getPercentile(99),
                        s.getPercentile(99.9),
                        s.getN(),
                        floor.p50Micros()));
            }
        }
        return results;
    }
}
