package org.locksmith.lock.tck.internal;

import static org.assertj.core.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockException;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;

/**
 * Contract 1 where it is easiest to break: several clients wait for a key whose holder process was killed, so they
 * all race for it the moment the store frees it (its lease expires or its session ends). A store that checks "expired"
 * and writes the new holder in two steps grants more than one of them. Each racer takes the key once, holds it for
 * {@value #HOLD_MS} ms while looking at {@code isValid()}, and releases; no two racers' validity intervals may overlap,
 * and with {@code FENCING} their tokens rise in grant order above the killed holder's.
 */
public final class TakeoverRaceContract {
    /** Racers: at least four, as the kit's contract asks. */
    static final int RACERS = 6;

    static final long HOLD_MS = 30;

    private final TckEnv env;

    public TakeoverRaceContract(TckEnv env) {
        this.env = env;
    }

    /** One racer's grant: from the clock right after its acquire returned to the last clock before a look said valid. */
    private record Interval(String racer, long token, long fromMicros, long toMicros, String releaseFailure) {}

    /**
     * Kills a worker holding {@code key}, then lets {@value #RACERS} clients ({@code first} and new ones) race for
     * it; the first must be granted within {@code free} of the kill.
     */
    public void racersForAKilledHoldersKey(String url, String key, LockClient first, Duration free) throws Exception {
        List<LockClient> racers = new ArrayList<>();
        racers.add(first);
        for (int i = 1; i < RACERS; i++) {
            racers.add(env.client("racer-" + i));
        }
        Path dir = Files.createTempDirectory("locksmith-tck-");
        env.closeAtEnd(() -> MutualExclusionContract.deleteTree(dir));
        CountDownLatch go = new CountDownLatch(1);
        AtomicLong firstGrant = new AtomicLong();
        Duration wait = free.plus(TckEnv.allow(Duration.ofMillis(RACERS * (HOLD_MS + 50))
                .plus(env.timings().handoff().multipliedBy(RACERS))
                .plus(env.timings().operationTimeout())));
        List<Future<Interval>> runs = new ArrayList<>();
        for (int i = 0; i < RACERS; i++) {
            LockClient racer = racers.get(i);
            String name = "racer-" + i;
            runs.add(env.fork(() -> {
                go.await();
                LockLease lease = racer.lock(key).acquire(wait);
                long from = nowMicros();
                firstGrant.compareAndSet(0, System.nanoTime());
                long token = env.has(LockFeature.FENCING) ? lease.fencingToken() : -1;
                long last = Long.MIN_VALUE;
                long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(HOLD_MS);
                while (until - System.nanoTime() > 0) {
                    long now = nowMicros();
                    if (lease.isValid()) {
                        last = now;
                    }
                    LockSupport.parkNanos(200_000);
                }
                String releaseFailure = null;
                try {
                    lease.release();
                } catch (LockException e) {
                    releaseFailure = e.toString();
                }
                return new Interval(name, token, from, last, releaseFailure);
            }));
        }
        KilledHolder killed = KilledHolder.run(env, dir, url, key, first);
        go.countDown();
        List<Interval> intervals = new ArrayList<>();
        for (Future<Interval> run : runs) {
            try {
                intervals.add(run.get(wait.toMillis() + 5_000, TimeUnit.MILLISECONDS));
            } catch (ExecutionException e) {
                fail(env.at(key) + "a client racing for the key of a killed holder failed: " + e.getCause(), e);
            }
        }
        intervals.sort(Comparator.comparingLong(Interval::fromMicros));
        long firstMillis = TimeUnit.NANOSECONDS.toMillis(firstGrant.get() - killed.killedAtNanos());
        env.note("killed holder -> next grant (ms)", firstMillis);
        if (firstMillis > free.toMillis()) {
            fail(env.at(key) + "not granted within " + free.toMillis() + " ms after its holder process was killed"
                    + " (SIGKILL): the first of " + RACERS + " waiting clients got it after " + firstMillis + " ms");
        }
        for (int i = 0; i < intervals.size(); i++) {
            Interval a = intervals.get(i);
            if (a.toMicros() == Long.MIN_VALUE) {
                fail(env.at(key) + a.racer() + " was granted the key but its lease never said isValid() == true in"
                        + " the " + HOLD_MS + " ms it held it");
            }
            for (int j = i + 1; j < intervals.size(); j++) {
                Interval b = intervals.get(j);
                if (b.fromMicros() <= a.toMicros()) {
                    fail(env.at(key) + "two valid holders: " + a.racer() + " held it validly until at least "
                            + (a.toMicros() - b.fromMicros()) + " us after " + b.racer() + " was granted it, both"
                            + " racing for the key of a killed holder; intervals (racer, token, from, to in epoch us): "
                            + intervals);
                }
            }
            if (env.has(LockFeature.FENCING)) {
                long before = i == 0 ? killed.token() : intervals.get(i - 1).token();
                if (a.token() <= before) {
                    fail(env.at(key) + "fencing token went backwards or repeated: " + a.racer() + " got " + a.token()
                            + " after "
                            + (i == 0
                                    ? "the killed holder's "
                                    : intervals.get(i - 1).racer() + "'s ")
                            + before + "; intervals: " + intervals);
                }
            }
        }
        for (Interval i : intervals) {
            if (i.releaseFailure() != null) {
                fail(env.at(key) + i.racer() + "'s release failed although it held the key validly: "
                        + i.releaseFailure() + "; intervals: " + intervals);
            }
        }
    }

    private static long nowMicros() {
        return ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
    }
}
