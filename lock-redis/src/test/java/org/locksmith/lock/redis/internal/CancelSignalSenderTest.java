package org.locksmith.lock.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The executor that sends cancel signals for waiters blocked in {@code BLPOP} and the clean-up releases of attempts
 * whose reply was lost. Its callers must never block: when every sender is stuck on a slow server, a new task is
 * queued, never run on the caller's thread (where it would stall the core for a command timeout), and never refused
 * (a refused clean-up leaves a key locked by an owner that gave up until its lease ends; before, a burst of more
 * timed-out attempts than blocking waiters was refused).
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class CancelSignalSenderTest {

    @Test
    void aSaturatedSenderQueuesEveryTaskAndNeverRunsOneOnTheCallersThread() throws Exception {
        int limit = 3;
        ThreadPoolExecutor sender = WaitRoom.cancelSignalSender(limit);
        CountDownLatch serverAnswers = new CountDownLatch(1);
        Set<Thread> ranOn = ConcurrentHashMap.newKeySet();
        AtomicInteger ran = new AtomicInteger();
        Runnable stuckSignal = () -> {
            ranOn.add(Thread.currentThread());
            try {
                serverAnswers.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            ran.incrementAndGet();
        };
        int burst = sender.getMaximumPoolSize() + limit + 500;
        try {
            for (int i = 0; i < burst; i++) {
                sender.execute(stuckSignal);
            }
            assertThat(ranOn).doesNotContain(Thread.currentThread());
            assertThat(sender.getMaximumPoolSize()).isLessThanOrEqualTo(limit);
        } finally {
            serverAnswers.countDown();
            sender.shutdown();
            assertThat(sender.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(ran).hasValue(burst);
        assertThat(ranOn).allSatisfy(t -> {
            assertThat(t.isDaemon()).isTrue();
            assertThat(t.getName()).startsWith("locksmith-redis-cancel-");
        });
    }
}
