package org.locksmith.lock.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link Permits}: fair, woken by releases and by cancellation, never by a timer. */
class PermitsTest {
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        threads.shutdownNow();
    }

    /** A request the test cancels by hand; deadlines are the permits' own. */
    private static final class Request implements AcquireRequest {
        final boolean interruptible;
        final List<Runnable> actions = new CopyOnWriteArrayList<>();
        volatile boolean cancelled;

        Request(boolean interruptible) {
            this.interruptible = interruptible;
        }

        void cancel() {
            cancelled = true;
            actions.forEach(Runnable::run);
        }

        @Override
        public String key() {
            return "k";
        }

        @Override
        public String ownerId() {
            return "o";
        }

        @Override
        public long deadlineNanos() {
            return Long.MAX_VALUE;
        }

        @Override
        public long remainingNanos() {
            return Long.MAX_VALUE;
        }

        @Override
        public boolean isTry() {
            return false;
        }

        @Override
        public boolean isInterruptible() {
            return interruptible;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public void onCancel(Runnable action) {
            actions.add(action);
            if (cancelled) {
                action.run();
            }
        }

        @Override
        public void reportLost(String reason, Throwable cause) {}
    }

    private Future<Boolean> waitFor(Permits permits, Request request) {
        return threads.submit(() -> permits.acquire(request, Long.MAX_VALUE));
    }

    private static void awaitQueued(Permits permits, int n) {
        await("waiters queued: " + n)
                .atMost(Duration.ofSeconds(5))
                .until(() -> permits.toString().contains(n + " waiting"));
    }

    @Test
    void waitersAreServedInArrivalOrder() throws Exception {
        Permits permits = new Permits(1);
        assertThat(permits.tryAcquire()).isTrue();
        List<Integer> order = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 3; i++) {
            int n = i;
            threads.submit(() -> {
                if (permits.acquire(new Request(true), Long.MAX_VALUE)) {
                    order.add(n);
                    permits.release();
                }
                return null;
            });
            awaitQueued(permits, i + 1);
        }
        assertThat(permits.tryAcquire()).as("a newcomer while others queue").isFalse();
        permits.release();
        await().atMost(Duration.ofSeconds(5)).until(() -> order.size() == 3);
        assertThat(order).containsExactly(0, 1, 2);
        assertThat(permits.tryAcquire()).isTrue();
    }

    /** The request's cancel action wakes the waiter at once: no slice to wait out. */
    @Test
    void cancellationWakesTheWaiterAtOnce() throws Exception {
        Permits permits = new Permits(1);
        permits.tryAcquire();
        Request request = new Request(false);
        Future<Boolean> waiting = waitFor(permits, request);
        awaitQueued(permits, 1);
        long start = System.nanoTime();
        request.cancel();
        assertThat(waiting.get(5, TimeUnit.SECONDS)).isFalse();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(40);
        permits.release();
        assertThat(permits.tryAcquire())
                .as("the permit, not handed to the cancelled waiter")
                .isTrue();
    }

    @Test
    void aWaitGivesUpAfterItsTime() throws Exception {
        Permits permits = new Permits(1);
        permits.tryAcquire();
        long start = System.nanoTime();
        assertThat(permits.acquire(new Request(true), TimeUnit.MILLISECONDS.toNanos(100)))
                .isFalse();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(100L, 2000L);
        assertThat(permits.toString()).contains("0 waiting");
    }

    @Test
    void anInterruptEndsOnlyAnInterruptibleWait() throws Exception {
        Permits permits = new Permits(1);
        permits.tryAcquire();
        CompletableFuture<Thread> interruptibleThread = new CompletableFuture<>();
        Future<Boolean> interruptible = threads.submit(() -> {
            interruptibleThread.complete(Thread.currentThread());
            return permits.acquire(new Request(true), Long.MAX_VALUE);
        });
        awaitQueued(permits, 1);
        interruptibleThread.get().interrupt();
        assertThatThrownBy(() -> interruptible.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(InterruptedException.class);

        CompletableFuture<Boolean> statusAfter = new CompletableFuture<>();
        CompletableFuture<Thread> uninterruptibleThread = new CompletableFuture<>();
        threads.submit(() -> {
            uninterruptibleThread.complete(Thread.currentThread());
            boolean got = permits.acquire(new Request(false), Long.MAX_VALUE);
            statusAfter.complete(got && Thread.interrupted());
            return null;
        });
        awaitQueued(permits, 1);
        uninterruptibleThread.get().interrupt();
        Thread.sleep(50); // no event to wait for: the wait must go on through the interrupt
        assertThat(statusAfter).isNotDone();
        permits.release();
        assertThat(statusAfter.get(5, TimeUnit.SECONDS))
                .as("granted, with the interrupt status set again")
                .isTrue();
    }
}
