package org.locksmith.lock.tck.internal;

import static org.assertj.core.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockTimeoutException;

/**
 * Contract 2, hand-offs under changing traffic: every release that someone waits for reaches a waiter, whatever the
 * number of releases around it (C02.6), and a waiter that gives up at the moment of a release leaves the key to the
 * next contender at once (C02.7).
 */
public final class HandoffContract {
    private final TckEnv env;

    public HandoffContract(TckEnv env) {
        this.env = env;
    }

    /** Rounds of {@link #noLostWakeupsWithVariedReleases}. */
    static final int VARIED_ROUNDS = 14;

    /** Rounds of {@link #noOrphanedGrantWhenGivingUpRacesTheRelease}, a third of each way of giving up. */
    static final int GIVE_UP_ROUNDS = 18;

    /**
     * C02.6: rounds that differ in how many releases they make: the holder first takes and releases one of two keys
     * 0 to 3 times with nobody waiting, then holds a key for which 1 to 3 clients wait, each wanting it once or twice
     * (a waiter granted releases and queues again behind the others). A store that drops a share of its release
     * notifications hides it from a test whose rounds all make the same releases (the dropped ones line up with
     * releases nobody waits for); here they fall on waited-for releases too. Each hand-off (from the start of the
     * release to the next grant of that key) is timed; with BLOCKING_WAKEUP at most one in twenty (at least one) may
     * exceed the tail bound of C02.3, and every one must stay within {@code 10 s × f}.
     */
    public void noLostWakeupsWithVariedReleases() throws Exception {
        LockClient a = env.client("A");
        List<LockClient> waiters = List.of(env.client("W0"), env.client("W1"), env.client("W2"));
        List<String> keys = List.of(env.key("varied-0"), env.key("varied-1"));
        List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
        List<String> rounds = new ArrayList<>();
        ThreadLocalRandom random = ThreadLocalRandom.current();
        Duration each = TckEnv.allow(Duration.ofSeconds(10));
        for (int round = 0; round < VARIED_ROUNDS; round++) {
            int k = random.nextInt(keys.size());
            String key = keys.get(k);
            String other = keys.get(1 - k);
            int quiet = random.nextInt(4);
            for (int q = 0; q < quiet; q++) {
                String quietKey = random.nextBoolean() ? key : other;
                a.lock(quietKey).acquire(Duration.ofSeconds(10)).release();
            }
            OptionalInt base = env.storeEntries(key);
            LockLease held = a.lock(key).acquire(Duration.ofSeconds(10));
            int count = 1 + random.nextInt(waiters.size());
            AtomicLong releaseStart = new AtomicLong();
            StringBuilder plan = new StringBuilder("round " + round + ": " + quiet + " quiet release(s), waiters");
            List<Future<Void>> futures = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                LockClient c = waiters.get(i);
                int grants = 1 + random.nextInt(2);
                plan.append(" W").append(i).append('x').append(grants);
                futures.add(env.fork(() -> {
                    for (int g = 0; g < grants; g++) {
                        try (LockLease l = c.lock(key).acquire(Duration.ofSeconds(30))) {
                            latencies.add(System.nanoTime() - releaseStart.get());
                            releaseStart.set(System.nanoTime()); // just before the release that closes this block
                        }
                    }
                    return null;
                }));
            }
            rounds.add(plan.toString());
            awaitQueued(key, base, 1 + count);
            releaseStart.set(System.nanoTime());
            held.release();
            for (Future<Void> f : futures) {
                try {
                    f.get(TckEnv.allow(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);
                } catch (java.util.concurrent.TimeoutException e) {
                    fail(env.at(a, key) + "waiters not all granted within 30 s after the release, " + plan);
                }
            }
        }
        List<Long> observed = List.copyOf(latencies);
        String at = env.at(a, keys.get(0));
        for (long l : observed) {
            if (l > each.toNanos()) {
                fail(at + "a hand-off took " + Probes.ms(l) + ", more than " + each.toMillis() + " ms, in rounds "
                        + rounds);
            }
        }
        env.note("varied hand-offs", observed.size());
        if (env.has(LockFeature.BLOCKING_WAKEUP)) {
            Duration tail = handoffTail();
            List<String> slow = observed.stream()
                    .filter(l -> l > tail.toNanos())
                    .map(Probes::ms)
                    .toList();
            int allowed = Math.max(1, observed.size() / 20);
            env.note("varied hand-offs slower than " + tail.toMillis() + " ms", slow.size());
            if (slow.size() > allowed) {
                fail(at + slow.size() + " of " + observed.size() + " hand-offs took longer than " + tail.toMillis()
                        + " ms " + slow + " (at most " + allowed + " may, for load noise; not stretched by the time"
                        + " factor), in rounds " + rounds + ": BLOCKING_WAKEUP declared, so every release someone"
                        + " waits for must wake a waiter, however many releases come before it; a lost wake-up"
                        + " leaves the waiter to a fallback re-check or a lease");
            }
        }
    }

    /** The ways a waiter gives up in {@link #noOrphanedGrantWhenGivingUpRacesTheRelease}. */
    private enum GiveUp {
        DEADLINE("tryAcquire(100 ms) reaching its deadline"),
        CANCEL("cancel(true) of a waiting acquireAsync(30 s)"),
        INTERRUPT("an interrupt of a thread waiting in acquire(30 s)");

        final String what;

        GiveUp(String what) {
            this.what = what;
        }
    }

    /**
     * C02.7: a waiter gives up (its deadline, a cancel, an interrupt) at the moment the holder releases: the deadline
     * is hit with the release timed 3 ms before to 3 ms after it, and the cancel or interrupt is started together
     * with the release. Whether the waiter is granted (then it releases at once) or not, client N's {@code
     * tryAcquire()}, tried every 5 ms from the moment the waiter's call ended, must be granted within {@code (handoff
     * + 500 ms) × f}: a grant the store handed to a waiter that was giving up must be released or withdrawn, not
     * left to run out with its lease or an operation timeout.
     */
    public void noOrphanedGrantWhenGivingUpRacesTheRelease() throws Exception {
        LockClient a = env.client("A");
        LockClient w = env.client("W");
        LockClient n = env.client("N");
        String key = env.key("give-up-race");
        Duration bound = TckEnv.allow(env.timings().handoff().plus(Duration.ofMillis(500)));
        Duration outcome = TckEnv.allow(Duration.ofSeconds(10));
        List<Long> takeovers = new ArrayList<>();
        for (int round = 0; round < GIVE_UP_ROUNDS; round++) {
            GiveUp way = GiveUp.values()[round % GiveUp.values().length];
            OptionalInt base = env.storeEntries(key);
            LockLease held = a.lock(key).acquire(Duration.ofSeconds(10));
            boolean granted;
            long offsetMicros = 0;
            switch (way) {
                case DEADLINE -> {
                    Duration t = Duration.ofMillis(100);
                    AtomicLong startedAt = new AtomicLong();
                    CountDownLatch started = new CountDownLatch(1);
                    Future<Boolean> f = env.fork(() -> {
                        startedAt.set(System.nanoTime());
                        started.countDown();
                        Optional<LockLease> l = w.lock(key).tryAcquire(t);
                        l.ifPresent(LockLease::release);
                        return l.isPresent();
                    });
                    started.await(10, TimeUnit.SECONDS);
                    offsetMicros = ThreadLocalRandom.current().nextLong(-3_000, 3_001);
                    long releaseAt = startedAt.get() + t.toNanos() + offsetMicros * 1_000;
                    for (long left; (left = releaseAt - System.nanoTime()) > 0; ) {
                        LockSupport.parkNanos(left); // the moment of the release, not a condition
                    }
                    held.release();
                    granted = outcome(f, outcome, key, way);
                }
                case CANCEL -> {
                    CompletableFuture<LockLease> f = w.lock(key).acquireAsync(Duration.ofSeconds(30));
                    awaitQueued(key, base, 2);
                    CyclicBarrier go = new CyclicBarrier(2);
                    Future<Boolean> cancel = env.fork(() -> {
                        go.await(10, TimeUnit.SECONDS);
                        return f.cancel(true);
                    });
                    go.await(10, TimeUnit.SECONDS);
                    held.release();
                    cancel.get(outcome.toMillis(), TimeUnit.MILLISECONDS);
                    granted = false;
                    if (!f.isCancelled()) {
                        try {
                            f.get(outcome.toMillis(), TimeUnit.MILLISECONDS).release();
                            granted = true;
                        } catch (ExecutionException e) {
                            throw new AssertionError(
                                    env.at(w, key) + "an acquireAsync whose cancel lost the race to the release failed",
                                    e.getCause());
                        }
                    }
                }
                case INTERRUPT -> {
                    AtomicReference<Thread> waiter = new AtomicReference<>();
                    CountDownLatch started = new CountDownLatch(1);
                    Future<Boolean> f = env.fork(() -> {
                        waiter.set(Thread.currentThread());
                        started.countDown();
                        try (LockLease l = w.lock(key).acquire(Duration.ofSeconds(30))) {
                            return true;
                        } catch (InterruptedException e) {
                            return false;
                        }
                    });
                    started.await(10, TimeUnit.SECONDS);
                    awaitQueued(key, base, 2);
                    CyclicBarrier go = new CyclicBarrier(2);
                    Future<Void> interrupt = env.fork(() -> {
                        go.await(10, TimeUnit.SECONDS);
                        waiter.get().interrupt();
                        return null;
                    });
                    go.await(10, TimeUnit.SECONDS);
                    held.release();
                    interrupt.get(outcome.toMillis(), TimeUnit.MILLISECONDS);
                    granted = outcome(f, outcome, key, way);
                }
                default -> throw new IllegalStateException(way.name());
            }
            long ended = System.nanoTime();
            Optional<LockLease> next = n.lock(key).tryAcquire();
            while (next.isEmpty() && System.nanoTime() - ended < bound.toNanos()) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
                next = n.lock(key).tryAcquire();
            }
            long took = System.nanoTime() - ended;
            if (next.isEmpty()) {
                fail(env.at(n, key) + "could not get the key within " + bound.toMillis() + " ms (hand-off + 500 ms,"
                        + " x factor) after " + way.what + " raced the holder's release (round " + round
                        + (way == GiveUp.DEADLINE ? ", released " + offsetMicros + " us from the deadline" : "")
                        + ", the waiter " + (granted ? "was granted and released" : "was not granted")
                        + "): a grant handed to a waiter that was giving up must be released, not left held by"
                        + " nobody until its lease or an operation timeout runs out");
            }
            next.get().release();
            takeovers.add(took);
        }
        env.note("give-up races: longest wait for the next contender (ms)", Probes.ms(Collections.max(takeovers)));
    }

    private boolean outcome(Future<Boolean> f, Duration within, String key, GiveUp way) throws Exception {
        try {
            return f.get(within.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError(
                    env.at(key) + "the waiter's call did not end within " + within.toMillis() + " ms after " + way.what
                            + " raced the release",
                    e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof LockTimeoutException) {
                return false;
            }
            throw new AssertionError(
                    env.at(key) + "the waiter failed after " + way.what + " raced the release", e.getCause());
        }
    }

    /** The tail bound of C02.3: {@code max(4 × handoff, 100 ms)}, not stretched by the time factor. */
    private Duration handoffTail() {
        Duration four = env.timings().handoff().multipliedBy(4);
        return four.compareTo(Duration.ofMillis(100)) > 0 ? four : Duration.ofMillis(100);
    }

    /**
     * Lets {@code n} more entries than {@code base} show in the store for the key (waiters queued), up to {@value #QUEUE_HEAD_START_MS} ms;
     * a store whose waiters do not show gets that long. Not a failure either way: the hand-offs are judged.
     */
    /** The longest the kit gives a waiter to show in the store, and the head start of one that does not. */
    static final long QUEUE_HEAD_START_MS = 60;

    private void awaitQueued(String key, OptionalInt base, int n) throws InterruptedException {
        Probes.awaitQueued(
                env, key, base, n, Duration.ofMillis(QUEUE_HEAD_START_MS), Probes.QUEUE_SETTLE, n + " waiter(s)");
    }
}
