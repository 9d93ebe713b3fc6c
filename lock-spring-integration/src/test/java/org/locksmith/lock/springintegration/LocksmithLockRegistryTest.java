package org.locksmith.lock.springintegration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.testservers.TestRedis;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.aggregator.AggregatingMessageHandler;
import org.springframework.integration.aggregator.DefaultAggregatingMessageGroupProcessor;
import org.springframework.integration.channel.QueueChannel;
import org.springframework.integration.config.EnableIntegration;
import org.springframework.integration.store.SimpleMessageStore;
import org.springframework.integration.support.MessageBuilder;
import org.springframework.messaging.Message;

/**
 * The registry's locks against the real Redis: exclusion between threads and between clients, Spring Integration's
 * {@code DistributedLock} and renewal methods, the lease with its fencing token, key checks, and an unchanged
 * aggregator on two nodes.
 */
class LocksmithLockRegistryTest {
    private static LockClient nodeA;
    private static LockClient nodeB;

    private final String prefix = "si-test-" + UUID.randomUUID() + ":";
    private final LocksmithLockRegistry registryA = new LocksmithLockRegistry(nodeA, prefix);
    private final LocksmithLockRegistry registryB = new LocksmithLockRegistry(nodeB, prefix);

    @BeforeAll
    static void openNodes() {
        nodeA = Locks.open(TestRedis.sharedLockUrl("leaseMs=2000&prefix=locksmith-si-test:"));
        nodeB = Locks.open(TestRedis.sharedLockUrl("leaseMs=2000&prefix=locksmith-si-test:"));
    }

    @AfterAll
    static void closeNodes() {
        nodeA.close();
        nodeB.close();
    }

    private static <T> T onAnotherThread(java.util.concurrent.Callable<T> task) throws Exception {
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            return thread.submit(task).get(10, TimeUnit.SECONDS);
        } finally {
            thread.shutdownNow();
        }
    }

    @Test
    void aHeldLockExcludesAnotherNodeAndAnotherThreadUntilUnlocked() throws Exception {
        LocksmithRegistryLock lock = registryA.obtain("orders");
        assertThat(lock.tryLock(Duration.ofSeconds(1), Duration.ofSeconds(30))).isTrue();
        try {
            assertThat(registryB.obtain("orders").tryLock()).as("another node").isFalse();
            assertThat(onAnotherThread(() -> registryA.obtain("orders").tryLock()))
                    .as("another thread of the same registry")
                    .isFalse();
            assertThat(lock.tryLock()).as("re-entry by the holder").isTrue();
            lock.unlock();
            assertThatThrownBy(() -> onAnotherThread(() -> {
                        registryA.obtain("orders").unlock();
                        return null;
                    }))
                    .as("unlock by a thread that does not hold it")
                    .hasRootCauseInstanceOf(IllegalMonitorStateException.class);
        } finally {
            lock.unlock();
        }
        LocksmithRegistryLock other = registryB.obtain("orders");
        assertThat(other.tryLock(100, TimeUnit.MILLISECONDS))
                .as("another node after unlock")
                .isTrue();
        other.unlock();
    }

    @Test
    void aWaitingNodeGetsTheLockWhenTheHolderUnlocks() throws Exception {
        LocksmithRegistryLock lock = registryA.obtain("handoff");
        lock.lock(Duration.ofSeconds(30));
        CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> {
            LocksmithRegistryLock theirs = registryB.obtain("handoff");
            try {
                boolean got = theirs.tryLock(5, TimeUnit.SECONDS);
                if (got) {
                    theirs.unlock();
                }
                return got;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        });
        assertThat(waiter).as("while held").isNotDone();
        lock.unlock();
        assertThat(waiter.get(5, TimeUnit.SECONDS))
                .as("the waiter after the unlock")
                .isTrue();
    }

    @Test
    void theHolderSeesItsLeaseAndFencingTokenAndRenewalChecksOwnership() throws Exception {
        LocksmithRegistryLock lock = registryA.obtain("fenced");
        assertThat(lock.lease()).as("before locking").isEmpty();
        assertThatThrownBy(() -> registryA.renewLock("fenced")).isInstanceOf(IllegalStateException.class);

        List<Long> tokens = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            registryA.executeLocked("fenced", () -> {
                LockLease lease = lock.lease().orElseThrow();
                assertThat(lease.isValid()).isTrue();
                assertThat(lease.holdCount())
                        .as("lease() leaves the hold count as it was")
                        .isEqualTo(1);
                assertThat(lease.key()).isEqualTo(prefix + "fenced");
                registryA.renewLock("fenced");
                registryA.renewLock("fenced", Duration.ofSeconds(10));
                tokens.add(lease.fencingToken());
            });
        }
        assertThat(tokens).isSorted().doesNotHaveDuplicates();
        assertThat(lock.lease()).as("after unlocking").isEmpty();
        assertThat(registryB.obtain("fenced").tryLock())
                .as("free after executeLocked")
                .isTrue();
        registryB.obtain("fenced").unlock();
    }

    @Test
    void badKeysAndTimesAreRejectedBeforeAnyIo() {
        assertThatThrownBy(() -> registryA.obtain(42)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> registryA.obtain(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new LocksmithLockRegistry(nodeA, "").obtain(""))
                .isInstanceOf(IllegalArgumentException.class);
        LocksmithRegistryLock lock = registryA.obtain("ttl");
        assertThatThrownBy(() -> lock.lock(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> lock.tryLock(Duration.ofSeconds(1), Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(lock::newCondition).isInstanceOf(UnsupportedOperationException.class);
        assertThat(lock.lease()).as("nothing was acquired").isEmpty();
    }

    /**
     * Spring Integration's aggregator, unchanged, on two nodes that share a message store: messages of each group
     * arrive on both nodes from several threads, and every group is released exactly once, complete.
     */
    @Test
    void anAggregatorOnTwoNodesReleasesEveryGroupOnceAndComplete() throws Exception {
        try (AnnotationConfigApplicationContext integration =
                new AnnotationConfigApplicationContext(Integration.class)) {
            aggregateOnTwoNodes(integration);
        }
    }

    /** The beans an aggregator needs (evaluation context, message builder factory), as in any integration app. */
    @Configuration
    @EnableIntegration
    static class Integration {}

    private void aggregateOnTwoNodes(BeanFactory beans) throws Exception {
        SimpleMessageStore store = new SimpleMessageStore();
        QueueChannel out = new QueueChannel();
        AggregatingMessageHandler nodeOne = aggregator(beans, store, registryA, out);
        AggregatingMessageHandler nodeTwo = aggregator(beans, store, registryB, out);
        int groups = 20;
        int size = 4;
        List<Message<?>> messages = new ArrayList<>();
        for (int g = 0; g < groups; g++) {
            for (int s = 1; s <= size; s++) {
                messages.add(MessageBuilder.withPayload(g + "/" + s)
                        .setCorrelationId("group-" + g)
                        .setSequenceNumber(s)
                        .setSequenceSize(size)
                        .build());
            }
        }
        Collections.shuffle(messages, new java.util.Random(42));
        ExecutorService senders = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < messages.size(); i++) {
                Message<?> m = messages.get(i);
                AggregatingMessageHandler node = i % 2 == 0 ? nodeOne : nodeTwo;
                sent.add(senders.submit(() -> node.handleMessage(m)));
            }
            for (Future<?> f : sent) {
                f.get(10, TimeUnit.SECONDS);
            }
        } finally {
            senders.shutdownNow();
        }
        Set<Object> released = new HashSet<>();
        for (int g = 0; g < groups; g++) {
            Message<?> group = out.receive(5_000);
            assertThat(group).as("released group %d of %d", g + 1, groups).isNotNull();
            assertThat((List<?>) group.getPayload()).hasSize(size);
            assertThat(released.add(group.getHeaders().get("correlationId")))
                    .as("a group released twice")
                    .isTrue();
        }
        assertThat(out.receive(0)).as("nothing more").isNull();
    }

    private static AggregatingMessageHandler aggregator(
            BeanFactory beans, SimpleMessageStore store, LocksmithLockRegistry registry, QueueChannel out) {
        AggregatingMessageHandler handler =
                new AggregatingMessageHandler(new DefaultAggregatingMessageGroupProcessor(), store);
        handler.setLockRegistry(registry);
        handler.setOutputChannel(out);
        handler.setBeanFactory(beans);
        handler.afterPropertiesSet();
        return handler;
    }
}
