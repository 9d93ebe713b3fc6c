package org.locksmith.lock.tck.internal;

import static org.assertj.core.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Assumptions;
import org.locksmith.lock.LockFeature;

/**
 * Contracts 1 and 3 under continuous load with faults (the Jepsen case): worker JVMs contend on one key through
 * random entry points while the kit kills holders with SIGKILL and stops holders and waiters with SIGSTOP past
 * their lease or session, then continues them. Every grant a worker reports becomes a validity interval, from the
 * moment after its grant to the last moment it saw {@code isValid()} true (clock read before the look), in epoch
 * microseconds, which all processes on one machine share. The run fails if two workers' intervals overlap, if a
 * fencing token repeats or goes backwards between intervals in time order, if a worker crashes, or if the key is
 * not granted again within the crashed-holder bound after a holder was killed or stopped.
 *
 * <p>Stochastic: the seed is in the report. The default run injects three faults; {@value #THOROUGH_PROPERTY}
 * {@code =true} injects twelve.
 */
public final class FaultLoadContract {
    /** System property that makes the run longer: twelve faults instead of three. */
    public static final String THOROUGH_PROPERTY = "locksmith.tck.thorough";

    private static final int WORKERS = 4;

    private enum Fault {
        KILL_HOLDER,
        PAUSE_HOLDER,
        PAUSE_WAITER
    }

    private final TckEnv env;

    public FaultLoadContract(TckEnv env) {
        this.env = env;
    }

    /** One worker JVM and everything it has printed so far. */
    private static final class Worker {
        final int id;
        final WorkerProcess process;
        final List<String> lines = new ArrayList<>();
        /** How many of {@link #lines} {@link #pumpAll} has looked through for an error. */
        int checked;

        boolean dead;

        Worker(int id, WorkerProcess process) {
            this.id = id;
            this.process = process;
        }

        void pump() {
            process.drainTo(lines);
        }

        /**
         * The grant number this worker holds as far as its output shows, or -1. A worker that has begun its release
         * ("R") holds no longer: stopped or killed inside the release, it may already have freed the key, and the
         * fault would leave no expired key for the others to race for.
         */
        long openGrant() {
            for (int i = lines.size() - 1; i >= 0; i--) {
                String[] f = lines.get(i).split(" ");
                switch (f[0]) {
                    case "G":
                        return Long.parseLong(f[1]);
                    case "R", "E", "L", "X":
                        return -1;
                    default:
                        break;
                }
            }
            return -1;
        }
    }

    /**
     * A grant as one worker saw it: {@code [start, end]} in epoch microseconds, from the moment after the grant to the
     * last moment {@code isValid()} was seen true; {@code seenValid} false if it never was (a grant that reached a
     * worker resumed after its lease or session had run out), and then it was valid at no moment.
     */
    record Interval(int worker, long n, long token, long start, long end, boolean seenValid) {
        @Override
        public String toString() {
            return "worker " + worker + " grant " + n + " (token " + token + ") "
                    + (seenValid
                            ? "valid from " + start + " to " + end + " us"
                            : "never seen valid (granted at " + start + " us)");
        }
    }

    private record Injected(Fault fault, int worker, long atMicros) {}

    public void validityIntervalsNeverOverlapUnderKillsAndPauses() throws Exception {
        String url = env.requireWorkerUrl();
        Optional<Duration> freeBound = KilledHolder.freeBound(env);
        Assumptions.assumeTrue(
                freeBound.isPresent(),
                "the backend declares neither LEASE_EXPIRY nor SESSION_BOUND: nothing frees the key of a killed or"
                        + " paused holder, so this contract has nothing to check");
        Duration bound = freeBound.get();
        String key = env.key("fault-load");
        Path dir = Files.createTempDirectory("locksmith-tck-");
        env.closeAtEnd(() -> MutualExclusionContract.deleteTree(dir));
        long seed = ThreadLocalRandom.current().nextLong();
        env.note("fault load seed", seed);
        List<Worker> workers = new ArrayList<>();
        for (int i = 0; i < WORKERS; i++) {
            workers.add(start(dir, url, key, seed, workers.size()));
        }
        for (Worker w : workers) {
            w.process.awaitLine("READY", TckEnv.allow(Duration.ofSeconds(30)));
            w.lines.add("READY");
        }
        awaitGrants(workers, 5, TckEnv.allow(Duration.ofSeconds(20)));

        // A kill last: the run then ends without waiting to see what a continued process believes.
        List<Fault> plan = new ArrayList<>();
        for (int i = 0; i < (Boolean.getBoolean(THOROUGH_PROPERTY) ? 4 : 1); i++) {
            plan.addAll(List.of(Fault.PAUSE_WAITER, Fault.PAUSE_HOLDER, Fault.KILL_HOLDER));
        }
        Duration pause = bound.plusMillis(300);
        List<Injected> injected = new ArrayList<>();
        for (int f = 0; f < plan.size(); f++) {
            Fault fault = plan.get(f);
            Worker target;
            long at;
            if (fault == Fault.PAUSE_WAITER) {
                target = aWaiter(workers);
                at = TckWorker.micros();
                target.process.signal("STOP");
            } else {
                target = stopAHolder(workers, bound);
                at = TckWorker.micros();
            }
            injected.add(new Injected(fault, target.id, at));
            if (fault == Fault.KILL_HOLDER) {
                target.process.kill(); // stopped, and then killed: it holds at the moment of its death
                target.dead = true;
                if (f < plan.size() - 1) {
                    workers.add(start(dir, url, key, seed, workers.size())); // as many contenders for what follows
                }
                sleepUntilGrantedElsewhere(workers, target, at, pause.toMillis());
            } else if (fault == Fault.PAUSE_HOLDER) {
                try {
                    // Continued once another worker holds the key: its first looks then fall in that grant.
                    sleepUntilGrantedElsewhere(workers, target, at, pause.toMillis());
                } finally {
                    target.process.signal("CONT");
                }
            } else {
                try {
                    sleepPumping(workers, pause.toMillis()); // past its session or lease: no event marks that
                } finally {
                    target.process.signal("CONT");
                }
            }
            sleepPumping(workers, 300);
        }
        for (Worker w : workers) {
            w.process.kill();
            w.pump();
        }

        List<Interval> intervals = intervals(workers);
        env.note("fault load workers started", workers.size());
        env.note(
                "fault load faults injected",
                injected.stream().map(Injected::fault).toList());
        env.note("fault load grants", intervals.size());
        checkNoOverlap(intervals);
        if (env.has(LockFeature.FENCING)) {
            checkTokens(intervals);
        }
        checkRecovery(injected, intervals, bound);
    }

    private Worker start(Path dir, String url, String key, long seed, int id) throws Exception {
        WorkerProcess p = WorkerProcess.start(
                dir, Duration.ofSeconds(120), "chaos", url, key, Long.toString(seed + id * 0x9E3779B97F4A7C15L));
        env.closeAtEnd(p);
        return new Worker(id, p);
    }

    private static void pumpAll(List<Worker> workers) {
        for (Worker w : workers) {
            w.pump();
            // only the lines new since the last look: the workers print up to a line a millisecond each
            for (; w.checked < w.lines.size(); w.checked++) {
                String line = w.lines.get(w.checked);
                if (line.startsWith("ERROR")) {
                    throw new AssertionError("worker " + w.id + " (" + w.process + ") crashed: " + line
                            + "; its stderr: " + w.process.stderrTail());
                }
            }
        }
    }

    private static void sleepPumping(List<Worker> workers, long millis) throws InterruptedException {
        long until = System.nanoTime() + millis * 1_000_000;
        while (System.nanoTime() - until < 0) {
            pumpAll(workers);
            Thread.sleep(Math.min(20, Math.max(1, (until - System.nanoTime()) / 1_000_000)));
        }
        pumpAll(workers);
    }

    /**
     * Sleeps until a worker other than {@code target} reports a grant after {@code sinceMicros}, and 300 ms more so
     * that it holds; at most {@code maxMillis} in all (the recovery check then reports a missing grant).
     */
    private static void sleepUntilGrantedElsewhere(
            List<Worker> workers, Worker target, long sinceMicros, long maxMillis) throws InterruptedException {
        long until = System.nanoTime() + maxMillis * 1_000_000;
        while (System.nanoTime() - until < 0 && !grantedElsewhere(workers, target, sinceMicros)) {
            sleepPumping(workers, 5);
        }
        sleepPumping(workers, Math.min(300, Math.max(0, (until - System.nanoTime()) / 1_000_000)));
    }

    private static boolean grantedElsewhere(List<Worker> workers, Worker target, long sinceMicros) {
        for (Worker w : workers) {
            if (w == target) {
                continue;
            }
            for (int i = w.lines.size() - 1; i >= 0; i--) { // newest first, back to the first line before since
                String[] f = w.lines.get(i).split(" ");
                long micros = f[0].equals("G") ? Long.parseLong(f[3]) : f[0].equals("V") ? Long.parseLong(f[2]) : -1;
                if (micros >= 0 && micros <= sinceMicros) {
                    break;
                }
                if (f[0].equals("G")) {
                    return true;
                }
            }
        }
        return false;
    }

    private void awaitGrants(List<Worker> workers, int count, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (grants(workers) < count) {
            if (System.nanoTime() - deadline > 0) {
                fail(env.at(env.key("fault-load")) + WORKERS + " worker processes contending on one key made only "
                        + grants(workers) + " grant(s) in " + timeout.toMillis() + " ms");
            }
            sleepPumping(workers, 5);
        }
    }

    private static long grants(List<Worker> workers) {
        return workers.stream()
                .flatMap(w -> w.lines.stream())
                .filter(l -> l.startsWith("G "))
                .count();
    }

    /**
     * Stops (SIGSTOP) a live worker that holds the key: one whose output, read after the stop, ends in a grant. Its
     * output lags, so a worker that had released by then is continued and another is tried. Waits for a holder up to
     * the crashed-holder bound plus five seconds.
     */
    private Worker stopAHolder(List<Worker> workers, Duration bound) throws Exception {
        long deadline = System.nanoTime() + bound.plusSeconds(5).toNanos();
        while (System.nanoTime() - deadline < 0) {
            pumpAll(workers);
            for (Worker w : workers) {
                if (!w.dead && w.openGrant() >= 0) {
                    w.process.signal("STOP");
                    Probes.quietPeriod(
                            Duration.ofMillis(20), "what the worker printed before its stop reaches this process");
                    pumpAll(workers);
                    if (w.openGrant() >= 0) {
                        return w;
                    }
                    w.process.signal("CONT");
                }
            }
            Thread.sleep(1);
        }
        return fail(env.at(env.key("fault-load")) + "no worker process held the key for "
                + bound.plusSeconds(5).toMillis() + " ms while " + WORKERS + " contended for it");
    }

    private static Worker aWaiter(List<Worker> workers) {
        pumpAll(workers);
        List<Worker> live = workers.stream().filter(w -> !w.dead).toList();
        return live.stream().filter(w -> w.openGrant() < 0).findFirst().orElse(live.get(0));
    }

    private static List<Interval> intervals(List<Worker> workers) {
        List<Interval> all = new ArrayList<>();
        for (Worker w : workers) {
            all.addAll(intervals(w.id, w.lines));
        }
        all.sort(Comparator.comparingLong(Interval::start));
        return all;
    }

    /** The grants of one worker's output lines ({@code G n token micros}, {@code V n micros}), in order. */
    static List<Interval> intervals(int worker, List<String> lines) {
        Map<Long, long[]> byGrant = new HashMap<>(); // n -> {token, start, end, seen valid (0/1)}
        List<Long> order = new ArrayList<>();
        for (String line : lines) {
            String[] f = line.split(" ");
            if (f[0].equals("G")) {
                long n = Long.parseLong(f[1]);
                long start = Long.parseLong(f[3]);
                byGrant.put(n, new long[] {Long.parseLong(f[2]), start, start, 0});
                order.add(n);
            } else if (f[0].equals("V")) {
                long[] g = byGrant.get(Long.parseLong(f[1]));
                if (g != null) {
                    g[2] = Math.max(g[2], Long.parseLong(f[2]));
                    g[3] = 1;
                }
            }
        }
        List<Interval> result = new ArrayList<>();
        for (long n : order) {
            long[] g = byGrant.get(n);
            result.add(new Interval(worker, n, g[0], g[1], g[2], g[3] == 1));
        }
        return result;
    }

    /**
     * No moment at which two workers both believed they held: intervals of different workers never overlap. A grant
     * never seen valid is no interval.
     */
    private void checkNoOverlap(List<Interval> intervals) {
        List<String> overlaps = overlaps(intervals);
        if (!overlaps.isEmpty()) {
            fail(env.at(env.key("fault-load")) + "two valid holders: " + overlaps.size() + " pair(s) of grants in"
                    + " different worker processes were valid at the same time while holders were killed and"
                    + " paused (SIGSTOP/SIGCONT); first: " + overlaps.get(0));
        }
    }

    /** The pairs of intervals (sorted by start) of different workers that overlap, described. */
    static List<String> overlaps(List<Interval> intervals) {
        List<Interval> active = new ArrayList<>();
        List<String> overlaps = new ArrayList<>();
        for (Interval cur : intervals) {
            if (!cur.seenValid()) {
                continue;
            }
            active.removeIf(a -> a.end() <= cur.start());
            for (Interval a : active) {
                if (a.worker() != cur.worker()) {
                    overlaps.add(
                            a + " overlaps " + cur + " by " + (Math.min(a.end(), cur.end()) - cur.start()) + " us");
                }
            }
            active.add(cur);
        }
        return overlaps;
    }

    /**
     * No token is issued twice, and in time order every grant seen valid has a greater token than every earlier one
     * seen valid (a grant never seen valid may arrive long after it was issued, behind later grants).
     */
    private void checkTokens(List<Interval> intervals) {
        Map<Long, Interval> issued = new HashMap<>();
        for (Interval cur : intervals) {
            Interval twice = cur.token() < 0 ? null : issued.putIfAbsent(cur.token(), cur);
            if (twice != null) {
                fail(env.at(env.key("fault-load")) + "fencing token repeated under kills and pauses: " + twice
                        + ", then " + cur);
            }
        }
        Interval highest = null;
        for (Interval cur : intervals) {
            if (cur.token() < 0 || !cur.seenValid()) {
                continue; // no token (a Lock hold without REENTRANT), or valid at no moment
            }
            if (highest != null && cur.token() <= highest.token()) {
                fail(env.at(env.key("fault-load")) + "fencing token "
                        + (cur.token() == highest.token() ? "repeated" : "went backwards") + " under kills and pauses: "
                        + highest + ", then " + cur);
            }
            if (highest == null || cur.token() > highest.token()) {
                highest = cur;
            }
        }
    }

    /** After a holder was killed or stopped, another worker is granted within the crashed-holder bound. */
    private void checkRecovery(List<Injected> injected, List<Interval> intervals, Duration bound) {
        long worst = 0;
        for (Injected f : injected) {
            if (f.fault() == Fault.PAUSE_WAITER) {
                continue;
            }
            Optional<Interval> next = intervals.stream()
                    .filter(i -> i.seenValid() && i.worker() != f.worker() && i.start() > f.atMicros())
                    .findFirst();
            long tookMs = next.map(i -> (i.start() - f.atMicros()) / 1000).orElse(Long.MAX_VALUE);
            if (tookMs > bound.toMillis() + TckEnv.allow(Duration.ofSeconds(1)).toMillis()) {
                fail(env.at(env.key("fault-load")) + "after " + f.fault() + " of worker " + f.worker() + ", no"
                        + " other worker was granted within " + bound.toMillis() + " ms + 1 s"
                        + (next.isPresent() ? " (next grant after " + tookMs + " ms)" : " (none before the end)"));
            }
            worst = Math.max(worst, tookMs);
        }
        env.note("fault load: holder killed/stopped -> next grant, worst (ms)", worst);
    }
}
