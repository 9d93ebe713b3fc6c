package org.locksmith.lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.LockBackend;

/**
 * Waiting costs nothing while nothing happens: the core keeps one deadline timer per waiting request and hears
 * interrupts when they happen, instead of checking every waiter on a timer.
 */
class CoreIdleWaitersTest {
    private static final int WAITERS = 1000;

    /**
     * A store whose every key is held by somebody else: a request waits, as in a socket read, until the core runs its
     * cancel action, which it registers from the requesting thread as the SPI asks.
     */
    static final class HeldStore implements LockBackend {
        final ReentrantLock lock = new ReentrantLock();
        final Condition changed = lock.newCondition();
        final AtomicInteger waiting = new AtomicInteger();
        final AtomicInteger cancelActions = new AtomicInteger();

        @Override
        public String name() {
            return "held";
        }

        @Override
        public Set<LockFeature> features() {
            return Set.of();
        }

        @Override
        public Duration leaseTime() {
            return Duration.ZERO;
        }

        @Override
        public Duration renewInterval() {
            return Duration.ZERO;
        }

        @Override
        public BackendLease acquire(AcquireRequest request) {
            boolean[] cancelled = new boolean[1];
            request.onCancel(() -> {
                cancelActions.incrementAndGet();
                lock.lock();
                try {
                    cancelled[0] = true;
                    changed.signalAll();
                } finally {
                    lock.unlock();
                }
            });
            lock.lock();
            waiting.incrementAndGet();
            try {
                while (!cancelled[0]) {
                    changed.awaitUninterruptibly(); // like a socket read: only the cancel action ends it
                }
                return null;
            } finally {
                waiting.decrementAndGet();
                lock.unlock();
            }
        }

        @Override
        public void close() {}
    }

    @Test
    void waitingThreadsKeepTheWatchdogIdleAndAreCancelledByTheirInterrupt() throws Exception {
        HeldStore store = new HeldStore();
        List<Thread> waiters = new ArrayList<>();
        AtomicInteger interrupted = new AtomicInteger();
        try (LockClient client = Locks.client(store)) {
            for (int i = 0; i < WAITERS; i++) {
                Thread t = new Thread(
                        () -> {
                            try {
                                client.lock("k").acquire(Duration.ofSeconds(60));
                            } catch (InterruptedException e) {
                                interrupted.incrementAndGet();
                            }
                        },
                        "idle-waiter-" + i);
                t.setDaemon(true);
                t.start();
                waiters.add(t);
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> store.waiting.get() == WAITERS);
            List<Thread> watchdogs = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().startsWith("locksmith-watchdog-"))
                    .toList();
            assertThat(watchdogs)
                    .as("the client's watchdog thread (it has deadlines to keep)")
                    .isNotEmpty();
            // Nothing happens in this window: how often is the watchdog found running? (The module reads no
            // java.management, so its state is sampled instead of its CPU time read.)
            int samples = 0;
            int running = 0;
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            while (System.nanoTime() - end < 0) {
                for (Thread w : watchdogs) {
                    samples++;
                    if (w.getState() == Thread.State.RUNNABLE) {
                        running++;
                    }
                }
                TimeUnit.MICROSECONDS.sleep(500);
            }
            assertThat(running)
                    .as(
                            "samples of %d in which the watchdog ran while %d threads waited and nothing happened (a"
                                    + " check every 20 ms per waiter keeps it busy)",
                            samples, WAITERS)
                    .isLessThanOrEqualTo(samples / 100);
            assertThat(store.cancelActions.get()).isZero();

            for (Thread t : waiters) {
                t.interrupt();
            }
            for (Thread t : waiters) {
                t.join(10_000);
            }
            assertThat(interrupted.get())
                    .as("waiters that threw InterruptedException after their interrupt")
                    .isEqualTo(WAITERS);
            assertThat(store.cancelActions.get()).isEqualTo(WAITERS);
            assertThat(store.waiting.get()).isZero();
        } finally {
            waiters.forEach(Thread::interrupt);
        }
    }

    /** A deadline ends an uninterruptible wait through the cancel action, once, without any interrupt. */
    @Test
    void theDeadlineCancelsTheWait() throws Exception {
        HeldStore store = new HeldStore();
        try (LockClient client = Locks.client(store)) {
            long start = System.nanoTime();
            assertThat(client.lock("k").tryAcquire(Duration.ofMillis(200))).isEmpty();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(200L, 5_000L);
            assertThat(store.cancelActions.get()).isEqualTo(1);
        }
    }

    /**
     * An interrupt or a deadline at the moment of the grant orphans nothing: each round, the holder releases while
     * the waiter is interrupted (or its deadline passes); the waiter either gets the lease and releases it or gives
     * up, and then the key is free in the store.
     */
    @Test
    void anInterruptOrADeadlineRacingTheGrantLeavesNoGrantBehind() throws Exception {
        MemoryBackend store = new MemoryBackend();
        store.uninterruptible = true; // the wait ends by the core's cancel action, as in a socket read
        try (LockClient client = Locks.client(store)) {
            for (int round = 0; round < 60; round++) {
                boolean byDeadline = round % 2 == 1;
                LockLease held = client.lock("k").acquireDetached(Duration.ofSeconds(1));
                CompletableFuture<String> outcome = new CompletableFuture<>();
                Thread waiter = new Thread(() -> {
                    try {
                        LockLease lease = client.lock("k").acquire(Duration.ofMillis(byDeadline ? 60 : 10_000));
                        boolean valid = lease.isValid();
                        lease.release();
                        outcome.complete(valid ? "granted" : "granted an invalid lease");
                    } catch (InterruptedException | LockTimeoutException e) {
                        outcome.complete("gave up");
                    } catch (Throwable e) {
                        outcome.complete("failed: " + e);
                    }
                });
                waiter.start();
                if (byDeadline) {
                    TimeUnit.MILLISECONDS.sleep(55 + round % 10); // the release lands around the deadline
                    held.release();
                } else {
                    await().atMost(Duration.ofSeconds(5))
                            .pollInterval(Duration.ofMillis(1))
                            .until(() -> store.waiters() == 1);
                    Thread releaser = new Thread(held::release);
                    releaser.start();
                    waiter.interrupt();
                    releaser.join(5_000);
                }
                assertThat(outcome.get(5, TimeUnit.SECONDS))
                        .as("round %d: the waiter's outcome", round)
                        .isIn("granted", "gave up");
                waiter.join(5_000);
                assertThat(store.isHeld("k"))
                        .as(
                                "round %d (%s): the key after the waiter gave up or released",
                                round, byDeadline ? "deadline" : "interrupt")
                        .isFalse();
            }
        }
    }
}
