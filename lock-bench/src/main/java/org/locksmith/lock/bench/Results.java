package org.locksmith.lock.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Everything one run measured, scenario by scenario; the report and the charts are drawn from it. */
public final class Results {

    /** A store's round-trip floor from Java: the physical limit the figures are read against. */
    public record Floor(StoreKind store, String operation, double p50Micros, double p99Micros) {}

    /**
     * S1: one thread, acquire + release; {@code floorP50Micros} is the store's natural round trip (EVALSHA, SELECT 1,
     * exists) measured just before this contender's run, so that the ratio is not skewed by the machine's latency
     * drifting between the start of the run and this contender's turn.
     */
    public record Uncontended(
            String contender,
            double opsPerSecond,
            double p50Micros,
            double p99Micros,
            double p999Micros,
            long samples,
            double floorP50Micros) {}

    /**
     * S1, Redis: p50 of a Locksmith acquire + release, of the same two scripts through a bare connection, and of two
     * {@code EVALSHA} of {@code return 1}, interleaved call by call ({@link ClientShare}).
     */
    public record ClientShare(
            String contender, double pairP50Micros, double scriptsP50Micros, double trivialP50Micros, long samples) {}

    /** S2: 8 threads of one client, a key each. */
    public record Parallel(String contender, double opsPerSecond, List<Double> rounds) {}

    /** S3: 8 clients on one key. */
    public record Contended(
            String contender,
            double grantsPerSecond,
            List<Double> rounds,
            double p50WaitMillis,
            double p99WaitMillis,
            double fairness,
            long grants) {}

    /** S4: release-to-grant time between two clients. */
    public record Handoff(String contender, double p50Micros, double p99Micros, long handoffs) {}

    /**
     * S5: store commands per re-entrant acquire and per re-entrant release; for comparison, store commands per
     * uncontended acquire + release pair, and (MySQL only, else NaN) InnoDB fsyncs per pair (Innodb_data_fsyncs).
     */
    public record Reentry(
            String contender,
            double acquireCommands,
            double releaseCommands,
            double pairCommands,
            double pairLogFsyncs) {}

    /** S6: one client holding many leases. */
    public record ManyLeases(
            String contender,
            int leases,
            double leaseSeconds,
            double commandsPerPeriod,
            double commandsPer100LeasesPerPeriod,
            double heapBytesPerLease,
            double acquireSeconds,
            int leasesLost) {}

    /** A scenario a contender does not take part in, and why. */
    public record NotApplicable(String contender, Scenario scenario, String reason) {}

    public final List<Floor> floors = new ArrayList<>();
    public final List<Uncontended> uncontended = new ArrayList<>();
    public final List<ClientShare> clientShare = new ArrayList<>();
    public final List<Parallel> parallel = new ArrayList<>();
    public final List<Contended> contended = new ArrayList<>();
    public final List<Handoff> handoff = new ArrayList<>();
    public final List<Reentry> reentry = new ArrayList<>();
    public final List<ManyLeases> manyLeases = new ArrayList<>();
    public final List<NotApplicable> notApplicable = new ArrayList<>();

    public Optional<Floor> floor(StoreKind store, String operation) {
        return floors.stream()
                .filter(f -> f.store() == store && f.operation().equals(operation))
                .findFirst();
    }

    public Optional<Uncontended> uncontended(String contender) {
        return uncontended.stream().filter(r -> r.contender().equals(contender)).findFirst();
    }

    public Optional<ClientShare> clientShare(String contender) {
        return clientShare.stream().filter(r -> r.contender().equals(contender)).findFirst();
    }

    public Optional<Parallel> parallel(String contender) {
        return parallel.stream().filter(r -> r.contender().equals(contender)).findFirst();
    }

    public Optional<Contended> contended(String contender) {
        return contended.stream().filter(r -> r.contender().equals(contender)).findFirst();
    }

    public Optional<Handoff> handoff(String contender) {
        return handoff.stream().filter(r -> r.contender().equals(contender)).findFirst();
    }

    public Optional<Reentry> reentry(String contender) {
        return reentry.stream().filter(r -> r.contender().equals(contender)).findFirst();
    }

    public Optional<ManyLeases> manyLeases(String contender) {
        return manyLeases.stream().filter(r -> r.contender().equals(contender)).findFirst();
    }

    public Optional<NotApplicable> notApplicable(String contender, Scenario scenario) {
        return notApplicable.stream()
                .filter(r -> r.contender().equals(contender) && r.scenario() == scenario)
                .findFirst();
    }
}
