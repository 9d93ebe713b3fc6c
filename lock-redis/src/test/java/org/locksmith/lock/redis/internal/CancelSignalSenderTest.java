package org.locksmith.lock.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The executor that sends cancel signals for waiters blocked in {@code BLPOP}. Its callers are the core's cancel
 * actions, which must never block: when every sender is stuck on a slow server, a new signal is refused at once,
 * never run on the caller's thread (where it would stall the core's scheduler for a command timeout).
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class CancelSignalSenderTest {

    @Test
    void aSaturatedSenderRefusesInsteadOfRunningOnTheCallersThread() throws Exception {
        int limit = 3;
        ThreadPoolExecutor sender = RedisLockBackend.cancelSignalSender(limit);
        CountDownLatch serverAnswers = new CountDownLatch(1);
        Set<Thread> ranOn = ConcurrentHashMap.newKeySet();
        Runnable stuckSignal = () -> {
            ranOn.add(Thread.currentThread());
            try {
                serverAnswers.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        try {
            // Every thread busy, the queue full: one signal per waiter that may block.
            int accepted = sender.getMaximumPoolSize() + limit;
            for (int i = 0; i < accepted; i++) {
                sender.execute(stuckSignal);
            }
            assertThatThrownBy(() -> sender.execute(stuckSignal)).isInstanceOf(RejectedExecutionException.class);
            assertThat(ranOn).doesNotContain(Thread.currentThread());
            assertThat(sender.getMaximumPoolSize()).isLessThanOrEqualTo(limit);
        } finally {
            serverAnswers.countDown();
            sender.shutdown();
            assertThat(sender.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(ranOn).allSatisfy(t -> {
            assertThat(t.isDaemon()).isTrue();
            assertThat(t.getName()).startsWith("locksmith-redis-cancel-");
        });
    }
}
