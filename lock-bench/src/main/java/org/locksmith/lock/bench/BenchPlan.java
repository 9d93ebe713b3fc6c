package org.locksmith.lock.bench;

import java.time.Duration;

/**
 * How long and how often each scenario runs. {@link #full()} is the published comparison (under ten minutes on the
 * project's 2-core machine); {@link #smoke()} runs every scenario of every contender for a moment, so that the
 * harness cannot rot unnoticed in the default test run.
 *
 * @param s1Forks JMH forks per contender (0: in this JVM)
 * @param s1Warmups JMH warm-up iterations
 * @param s1WarmupTime length of one JMH warm-up iteration
 * @param s1Iterations JMH measurement iterations
 * @param s1IterationTime length of one JMH measurement iteration
 * @param warmup warm-up before the measured rounds of S2 and S3
 * @param rounds measured rounds of S2 and S3 (the median is reported)
 * @param roundTime length of one round
 * @param handoffWarmup S4 hand-offs not measured
 * @param handoffs S4 hand-offs measured at most
 * @param handoffBudget S4 time limit (a polling lock gets fewer hand-offs within it)
 * @param handoffSettle how long the holder waits, after telling the other client to acquire, before it releases:
 *     time for the waiter to block in the store
 * @param reentries S5 re-entrant acquires per counted run
 * @param leases S6 leases held by one client
 * @param s6Lease S6 lease time; the leases are held for three of them
 * @param floorSamples measured round trips per floor
 */
public record BenchPlan(
        String name,
        int s1Forks,
        int s1Warmups,
        Duration s1WarmupTime,
        int s1Iterations,
        Duration s1IterationTime,
        Duration warmup,
        int rounds,
        Duration roundTime,
        int handoffWarmup,
        int handoffs,
        Duration handoffBudget,
        Duration handoffSettle,
        int reentries,
        int leases,
        Duration s6Lease,
        int floorSamples) {

    /** The published run. */
    public static BenchPlan full() {
        return new BenchPlan(
                "full",
                1,
                2,
                Duration.ofSeconds(2),
                3,
                Duration.ofSeconds(2),
                Duration.ofSeconds(1),
                3,
                Duration.ofSeconds(2),
                30,
                400,
                Duration.ofSeconds(6),
                Duration.ofMillis(3),
                200,
                10_000,
                Duration.ofSeconds(3),
                20_000);
    }

    /** Seconds per contender: proves the harness, measures nothing worth publishing. */
    public static BenchPlan smoke() {
        return new BenchPlan(
                "smoke",
                0,
                1,
                Duration.ofMillis(100),
                1,
                Duration.ofMillis(100),
                Duration.ofMillis(100),
                1,
                Duration.ofMillis(300),
                2,
                10,
                Duration.ofMillis(600), // a 100 ms poller still records a few hand-offs
                Duration.ofMillis(3),
                20,
                200,
                Duration.ofMillis(600),
                500);
    }
}
