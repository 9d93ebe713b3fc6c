package org.locksmith.lock.tck.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import org.awaitility.Awaitility;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockTimeoutException;

/** Contracts 5 (deadlines) and 6 (interruption). */
public final class DeadlineContract {
    private final TckEnv env;

    public DeadlineContract(TckEnv env) {
        this.env = env;
    }

    /** A timed acquire on a held key gives up no earlier than asked and no later than asked + overshoot. */
    public void timedAcquireGivesUpOnTime() throws Exception {
        LockClient a = env.client("A");
        LockClient b = env.client("B");
        String key = env.key("deadline");
        // Without renewal a lease lasts its lease time: each attempt then gets a fresh hold, and waits for at most
        // 0.6 of a lease, so that no waiter is (rightly) granted a key whose lease ran out.
        boolean unrenewed = env.has(LockFeature.LEASE_EXPIRY) && !env.has(LockFeature.AUTO_RENEWAL);
        Duration cap = unrenewed ? env.timings().leaseTime().multipliedBy(3).dividedBy(5) : Duration.ofDays(1);
        LockLease held = a.lock(key).acquire(Duration.ofSeconds(5));
        Duration overshoot = TckEnv.allow(env.timings().deadlineOvershoot());
        for (Duration wanted : new Duration[] {Duration.ofMillis(300), Duration.ofMillis(700)}) {
            Duration asked = wanted.compareTo(cap) < 0 ? wanted : cap;
            held = unrenewed ? freshHold(a, key, held) : held;
            long start = System.nanoTime();
            Optional<LockLease> got = b.lock(key).tryAcquire(asked);
            long took = System.nanoTime() - start;
            if (got.isPresent()) {
                got.get().release();
                fail(env.at(b, key) + "tryAcquire(" + asked.toMillis() + " ms) was granted a key client A holds");
            }
            checkWindow(b, key, "tryAcquire(" + asked.toMillis() + " ms)", asked, overshoot, took);
        }
        Duration asked = Duration.ofMillis(400).compareTo(cap) < 0 ? Duration.ofMillis(400) : cap;
        held = unrenewed ? freshHold(a, key, held) : held;
        long start = System.nanoTime();
        assertThatThrownBy(() -> b.lock(key).acquire(asked))
                .as(env.at(b, key) + "acquire(" + asked.toMillis() + " ms) of a held key")
                .isInstanceOf(LockTimeoutException.class);
        checkWindow(b, key, "acquire(" + asked.toMillis() + " ms)", asked, overshoot, System.nanoTime() - start);
        assertThat(held.isValid())
                .as(env.at(a, key) + "holder's lease after timed-out waiters")
                .isTrue();
        held.release();
        Probes.assertGrantable(env, b, key, "after the holder released (timed-out attempts must leave nothing)");
    }

    /** Releases {@code held} and takes {@code key} again, for a full lease from now. */
    private LockLease freshHold(LockClient a, String key, LockLease held) throws InterruptedException {
        held.release();
        return a.lock(key).acquire(Duration.ofSeconds(5));
    }

    private void checkWindow(
            LockClient client, String key, String what, Duration asked, Duration overshoot, long tookNanos) {
        assertThat(tookNanos)
                .as(env.at(client, key) + what + " gave up after " + Probes.ms(tookNanos) + ", earlier than asked")
                .isGreaterThanOrEqualTo(asked.toNanos());
        assertThat(tookNanos)
                .as(env.at(client, key) + what + " gave up after " + Probes.ms(tookNanos) + ", more than "
                        + overshoot.toMillis() + " ms (timings().deadlineOvershoot() x factor) late")
                .isLessThanOrEqualTo(asked.plus(overshoot).toNanos());
    }

    /** Tries timed per key in {@link #tryAcquireDoesNotWait}. */
    static final int TRY_ROUNDS = 9;

    /** Slack over three free-key attempts that a refused try may take (scheduling noise, a slower refusal path). */
    static final Duration TRY_SLACK = Duration.ofMillis(10);

    private static long median(long[] values) {
        long[] sorted = values.clone();
        java.util.Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    /**
     * tryAcquire() and acquire(ZERO) make one attempt and never wait on the holder: a refusal costs about what a
     * grant of a free key costs (medians compared), and never more than the deadline overshoot.
     */
    public void tryAcquireDoesNotWait() throws Exception {
        LockClient a = env.client("A");
        LockClient b = env.client("B");
        String key = env.key("try");
        // What one attempt costs on this store: tryAcquire() of a free key, warmed up (the first use of a key may
        // create state), the median of TRY_ROUNDS.
        String free = env.key("try-free");
        b.lock(free).tryAcquire().ifPresent(LockLease::release);
        long[] freeTries = new long[TRY_ROUNDS];
        for (int i = 0; i < TRY_ROUNDS; i++) {
            long start = System.nanoTime();
            Optional<LockLease> got = b.lock(free).tryAcquire();
            freeTries[i] = System.nanoTime() - start;
            assertThat(got).as(env.at(b, free) + "tryAcquire() of a free key").isPresent();
            got.get().release();
        }
        LockLease held = a.lock(key).acquire(Duration.ofSeconds(5));
        Duration bound = TckEnv.allow(env.timings().deadlineOvershoot());
        long[] heldTries = new long[TRY_ROUNDS];
        for (int i = 0; i < TRY_ROUNDS; i++) {
            long start = System.nanoTime();
            Optional<LockLease> got = b.lock(key).tryAcquire();
            long took = System.nanoTime() - start;
            heldTries[i] = took;
            assertThat(got).as(env.at(b, key) + "tryAcquire() of a held key").isEmpty();
            assertThat(took)
                    .as(env.at(b, key) + "tryAcquire() of a held key took " + Probes.ms(took)
                            + ": it must not wait on the holder")
                    .isLessThanOrEqualTo(bound.toNanos());
        }
        // A refusal costs about what a grant costs (one attempt), not a short wait for the holder: a try that waits
        // even tens of ms stands out against the store's own round trips.
        long freeMedian = median(freeTries);
        long heldMedian = median(heldTries);
        long refusalBound = 3 * freeMedian + TckEnv.allow(TRY_SLACK).toNanos();
        env.note("tryAcquire() median (ms): free key", String.format(Locale.ROOT, "%.2f", freeMedian / 1e6));
        env.note("tryAcquire() median (ms): held key", String.format(Locale.ROOT, "%.2f", heldMedian / 1e6));
        assertThat(heldMedian)
                .as(env.at(b, key) + "tryAcquire() of a held key took " + Probes.ms(heldMedian) + " (median of "
                        + TRY_ROUNDS + "), a free key's took " + Probes.ms(freeMedian) + ": a refusal may cost at most"
                        + " three attempts plus " + TckEnv.allow(TRY_SLACK).toMillis() + " ms ("
                        + Probes.ms(refusalBound) + "); it must not wait on the holder")
                .isLessThanOrEqualTo(refusalBound);
        long start = System.nanoTime();
        assertThatThrownBy(() -> b.lock(key).acquire(Duration.ZERO))
                .as(env.at(b, key) + "acquire(ZERO) of a held key")
                .isInstanceOf(LockTimeoutException.class);
        assertThat(System.nanoTime() - start)
                .as(env.at(b, key) + "acquire(ZERO) must not wait")
                .isLessThanOrEqualTo(bound.toNanos());
        assertThatThrownBy(() -> b.lock(key).acquire(Duration.ofMillis(-1)))
                .as(env.at(b, key) + "negative timeout")
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> b.lock(key).acquire(null))
                .as(env.at(b, key) + "null timeout")
                .isInstanceOf(NullPointerException.class);
        held.release();
        Probes.assertGrantable(env, b, key, "after release");
    }

    /** A waiter whose holder releases before its deadline is granted. */
    public void timedAcquireSucceedsWhenFreedInTime() throws Exception {
        LockClient a = env.client("A");
        LockClient b = env.client("B");
        String key = env.key("in-time");
        LockLease held = a.lock(key).acquire(Duration.ofSeconds(5));
        Future<Optional<LockLease>> waiter = env.fork(() -> {
            Optional<LockLease> l = b.lock(key).tryAcquire(Duration.ofSeconds(10));
            l.ifPresent(LockLease::release);
            return l;
        });
        // The length is the point: a wait that gives up early (a deadline in the wrong unit) has given up by then.
        Probes.quietPeriod(Duration.ofMillis(100), "the waiter keeps waiting 100 ms into its 10 s");
        held.release();
        assertThat(waiter.get(15, TimeUnit.SECONDS))
                .as(env.at(b, key) + "tryAcquire(10 s) when the holder released after 100 ms")
                .isPresent();
    }

    /**
     * Contract 6: a waiter interrupted while waiting throws InterruptedException promptly, with its interrupt
     * status cleared, holds nothing, leaves no waiter state in the store (where it can be seen), and leaves no ghost
     * that would block the next waiter.
     */
    public void interruptedWaiterLeavesNothing() throws Exception {
        LockClient holder = env.client("H");
        LockClient waiting = env.client("W");
        LockClient next = env.client("N");
        String key = env.key("interrupt");
        LockLease held = holder.lock(key).acquire(Duration.ofSeconds(5));
        OptionalInt before = env.storeEntries(key);
        AtomicReference<Thread> waiterThread = new AtomicReference<>();
        AtomicReference<Long> caughtAt = new AtomicReference<>();
        Future<String> waiter = env.fork(() -> {
            waiterThread.set(Thread.currentThread());
            try {
                LockLease l = waiting.lock(key).acquire(Duration.ofSeconds(30));
                l.release();
                return "granted a lease instead of throwing InterruptedException";
            } catch (InterruptedException e) {
                caughtAt.set(System.nanoTime());
                if (Thread.currentThread().isInterrupted()) {
                    return "InterruptedException thrown but the interrupt status was left set";
                }
                if (waiting.lock(key).isHeldByCurrentThread()) {
                    return "the interrupted thread holds the key";
                }
                return null;
            } catch (Throwable t) {
                return "threw " + t + " instead of InterruptedException";
            }
        });
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> waiterThread.get() != null);
        Probes.awaitQueued(
                env, key, before, 1, Duration.ofMillis(150), Probes.QUEUE_SETTLE, "the waiter to be interrupted");
        long interruptedAt = System.nanoTime();
        waiterThread.get().interrupt();
        String problem;
        try {
            problem = waiter.get(10, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError(env.at(waiting, key) + "interrupted waiter still waiting after 10 s", e);
        }
        assertThat(problem).as(env.at(waiting, key) + "interrupted waiter").isNull();
        long took = caughtAt.get() - interruptedAt;
        Duration prompt = TckEnv.allow(Duration.ofMillis(200));
        assertThat(took)
                .as(env.at(waiting, key) + "InterruptedException came " + Probes.ms(took) + " after the interrupt")
                .isLessThanOrEqualTo(prompt.toNanos());
        if (before.isPresent()) {
            Awaitility.await()
                    .atMost(TckEnv.allow(Duration.ofSeconds(2)))
                    .pollInterval(Duration.ofMillis(20))
                    .untilAsserted(() -> assertThat(env.storeEntries(key).getAsInt())
                            .as(env.at(waiting, key) + "store entries after the interrupted waiter left (before it: "
                                    + before.getAsInt() + ")")
                            .isLessThanOrEqualTo(before.getAsInt()));
        }
        // The next waiter must not queue behind a ghost of the interrupted one.
        Future<Boolean> nextWaiter = env.fork(() -> {
            Optional<LockLease> l = next.lock(key).tryAcquire(Duration.ofSeconds(20));
            l.ifPresent(LockLease::release);
            return l.isPresent();
        });
        Probes.awaitQueued(env, key, before, 1, Duration.ofMillis(100), Probes.QUEUE_SETTLE, "the next waiter");
        held.release();
        Duration bound = TckEnv.allow(env.timings().handoff().plus(Duration.ofSeconds(1)));
        boolean granted;
        try {
            granted = nextWaiter.get(bound.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            granted = false;
        } catch (ExecutionException e) {
            throw new AssertionError(env.at(next, key) + "next waiter failed", e.getCause());
        }
        assertThat(granted)
                .as(env.at(next, key) + "the next waiter was not granted within " + bound.toMillis()
                        + " ms of the release: a ghost of the interrupted waiter blocks it")
                .isTrue();
        Probes.assertGrantable(env, waiting, key, "by the formerly interrupted client afterwards");
    }

    /** An acquire by an already interrupted thread throws at once and clears the status. */
    public void interruptedBeforeAcquire() throws Exception {
        LockClient a = env.client("A");
        String key = env.key("pre-interrupted");
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> a.lock(key).acquire(Duration.ofSeconds(5)))
                    .as(env.at(a, key) + "acquire by an interrupted thread")
                    .isInstanceOf(InterruptedException.class);
            assertThat(Thread.currentThread().isInterrupted())
                    .as(env.at(a, key) + "interrupt status after InterruptedException")
                    .isFalse();
        } finally {
            Thread.interrupted();
        }
        assertThat(a.lock(key).isHeldByCurrentThread())
                .as(env.at(a, key) + "held after interrupt")
                .isFalse();
        LockClient b = env.client("B");
        Probes.assertGrantable(env, b, key, "after an interrupted acquire");
    }

    /**
     * C06.6: the interrupt status does not stop what does not wait. With the status set, {@code tryAcquire()} of a
     * free key is granted, {@code tryAcquire()} of a held key answers empty, and {@code release()} tells the store
     * (a waiter is granted); none throws and each leaves the status set. Catches a client whose socket I/O gives up
     * on an interrupted thread (a virtual thread closes its socket then).
     */
    public void interruptStatusDoesNotStopOperationsThatDoNotWait() throws Exception {
        LockClient a = env.client("A");
        LockClient b = env.client("B");
        String key = env.key("interrupt-status");
        Optional<LockLease> first = withInterruptStatus(
                a, key, "tryAcquire() of a free key", () -> a.lock(key).tryAcquire());
        assertThat(first)
                .as(env.at(a, key) + "tryAcquire() of a free key with the interrupt status set")
                .isPresent();
        LockLease held = first.get();
        OptionalInt alone = env.storeEntries(key);
        CountDownLatch asking = new CountDownLatch(1);
        Future<Long> waiter = env.fork(() -> {
            asking.countDown();
            LockLease l = b.lock(key).acquire(Duration.ofSeconds(20));
            long grantedAt = System.nanoTime();
            l.release();
            return grantedAt;
        });
        asking.await();
        Probes.awaitQueued(env, key, alone, 1, Duration.ofMillis(200), Probes.QUEUE_SETTLE, "the waiter");
        Optional<LockLease> other = withInterruptStatus(
                b, key, "tryAcquire() of a held key", () -> b.lock(key).tryAcquire());
        other.ifPresent(LockLease::release);
        assertThat(other)
                .as(env.at(b, key) + "tryAcquire() of a key client A holds, with the interrupt status set")
                .isEmpty();
        long releasedAt = System.nanoTime();
        withInterruptStatus(a, key, "release()", () -> {
            held.release();
            return null;
        });
        Duration bound = TckEnv.allow(env.timings().handoff().plus(Duration.ofSeconds(1)));
        long grantedAt;
        try {
            grantedAt = waiter.get(bound.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError(env.at(b, key) + "the waiter was not granted within " + bound.toMillis()
                    + " ms of a release made with the interrupt status set: the store was not told");
        } catch (ExecutionException e) {
            throw new AssertionError(env.at(b, key) + "the waiter failed", e.getCause());
        }
        env.note(
                "waiter granted after a release with the interrupt status set (ms)", Probes.ms(grantedAt - releasedAt));
    }

    /** Runs {@code op} with the interrupt status set; fails if it throws or clears the status. Clears it after. */
    private <T> T withInterruptStatus(LockClient c, String key, String what, Callable<T> op) {
        Thread.currentThread().interrupt();
        T result;
        boolean kept;
        try {
            result = op.call();
        } catch (Exception e) {
            Thread.interrupted();
            throw new AssertionError(env.at(c, key) + what + " with the interrupt status set threw " + e, e);
        } finally {
            kept = Thread.interrupted();
        }
        assertThat(kept)
                .as(env.at(c, key) + "interrupt status after " + what + " (it must be left set)")
                .isTrue();
        return result;
    }

    /**
     * {@code asLock().lock()} is not interruptible, as {@code Lock.lock()} says: an interrupted waiter keeps waiting,
     * is granted once the holder releases, and returns with its interrupt status set.
     */
    public void lockIsNotInterruptible() throws Exception {
        LockClient holder = env.client("H");
        LockClient w = env.client("W");
        String key = env.key("lock-uninterruptible");
        LockLease held = holder.lock(key).acquire(Duration.ofSeconds(5));
        OptionalInt alone = env.storeEntries(key);
        AtomicReference<Thread> waiter = new AtomicReference<>();
        CountDownLatch locking = new CountDownLatch(1);
        Future<Boolean> result = env.fork(() -> {
            waiter.set(Thread.currentThread());
            Lock lock = w.lock(key).asLock();
            locking.countDown();
            lock.lock();
            boolean interrupted = Thread.interrupted();
            lock.unlock();
            return interrupted;
        });
        assertThat(locking.await(5, TimeUnit.SECONDS)).isTrue();
        Probes.awaitQueued(
                env, key, alone, 1, Duration.ofMillis(150), Probes.QUEUE_SETTLE, "the asLock().lock() waiter");
        waiter.get().interrupt();
        Probes.quietPeriod(Duration.ofMillis(100), "asLock().lock() keeps waiting through a first interrupt");
        waiter.get().interrupt();
        Probes.quietPeriod(Duration.ofMillis(300), "asLock().lock() keeps waiting through a second interrupt");
        assertThat(result.isDone())
                .as(env.at(w, key) + "asLock().lock() 400 ms after an interrupt while another client holds the key"
                        + " (it must keep waiting, not return or throw)")
                .isFalse();
        assertThat(held.isValid()).as(env.at(holder, key) + "holder's lease").isTrue();
        held.release();
        Boolean interrupted;
        try {
            interrupted = result.get(TckEnv.allow(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new AssertionError(
                    env.at(w, key) + "asLock().lock() interrupted while waiting threw instead of waiting: "
                            + e.getCause(),
                    e.getCause());
        }
        assertThat(interrupted)
                .as(env.at(w, key) + "interrupt status when an interrupted asLock().lock() returned")
                .isTrue();
        Probes.assertGrantable(env, holder, key, "after the uninterruptible waiter unlocked");
    }
}
