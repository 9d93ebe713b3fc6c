package org.locksmith.lock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockExtender;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.testservers.TestRedis;
import redis.clients.jedis.Jedis;

/**
 * What the adapter adds to, or does differently from, ShedLock's own tests ({@link ShedLockProviderContractTest}):
 * the job's view of its lease (fencing token, loss), lockAtMostFor and lockAtLeastFor seen by another node with
 * their timing, extension through {@link LockExtender}, close, and the crash bound, which is the client's lease time
 * rather than lockAtMostFor. Two clients of the real Redis are two nodes.
 */
class LocksmithLockProviderTest {
    private static LockClient nodeA;
    private static LockClient nodeB;

    private final String prefix = TestStores.uniquePrefix();
    private final LocksmithLockProvider a = new LocksmithLockProvider(nodeA, prefix);
    private final LocksmithLockProvider b = new LocksmithLockProvider(nodeB, prefix);

    @BeforeAll
    static void openNodes() {
        nodeA = TestStores.REDIS.open();
        nodeB = TestStores.REDIS.open();
    }

    @AfterEach
    void closeProviders() {
        a.close();
        b.close();
    }

    @AfterAll
    static void closeNodes() {
        nodeA.close();
        nodeB.close();
    }

    private static LockConfiguration config(String name, Duration atMost, Duration atLeast) {
        return new LockConfiguration(ClockProvider.now(), name, atMost, atLeast);
    }

    /** Whether node B can take the lock now (it lets go at once if it can). */
    private boolean nodeBCanTake(String name) {
        Optional<SimpleLock> lock = b.lock(config(name, Duration.ofMinutes(1), Duration.ZERO));
        lock.ifPresent(SimpleLock::unlock);
        return lock.isPresent();
    }

    @Test
    void aJobSeesItsOwnLeaseAndARisingFencingTokenWhileItRuns() {
        DefaultLockingTaskExecutor executor = new DefaultLockingTaskExecutor(a);
        List<Long> tokens = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            executor.executeWithLock(
                    (Runnable) () -> {
                        LockLease lease = LocksmithLockProvider.currentLease().orElseThrow();
                        assertThat(lease.isValid())
                                .as("the job's lease while it runs")
                                .isTrue();
                        assertThat(lease.key()).isEqualTo(prefix + "job");
                        assertThat(nodeBCanTake("job"))
                                .as("another node while the job runs")
                                .isFalse();
                        assertThatThrownBy(lease::release)
                                .as("the job cannot release the holder thread's lease behind ShedLock's back")
                                .isInstanceOf(IllegalMonitorStateException.class);
                        tokens.add(lease.fencingToken());
                    },
                    config("job", Duration.ofMinutes(1), Duration.ZERO));
        }
        assertThat(tokens)
                .as("fencing tokens of three runs")
                .hasSize(3)
                .isSorted()
                .doesNotHaveDuplicates();
        assertThat(LocksmithLockProvider.currentLease()).as("after the job").isEmpty();
        assertThat(nodeBCanTake("job")).as("after the job").isTrue();
    }

    @Test
    void nestedLocksShowTheInnermostLease() {
        SimpleLock outer =
                a.lock(config("outer", Duration.ofMinutes(1), Duration.ZERO)).orElseThrow();
        SimpleLock inner =
                a.lock(config("inner", Duration.ofMinutes(1), Duration.ZERO)).orElseThrow();
        assertThat(LocksmithLockProvider.currentLease().orElseThrow().key()).isEqualTo(prefix + "inner");
        inner.unlock();
        assertThat(LocksmithLockProvider.currentLease().orElseThrow().key()).isEqualTo(prefix + "outer");
        outer.unlock();
        assertThat(LocksmithLockProvider.currentLease()).isEmpty();
    }

    @Test
    void lockAtMostForFreesTheLockWhileTheJobStillRunsAndTellsTheJob() throws Exception {
        Duration atMost = Duration.ofMillis(300);
        long start = System.nanoTime();
        SimpleLock lock = a.lock(config("long-job", atMost, Duration.ZERO)).orElseThrow();
        LockLease lease = LocksmithLockProvider.currentLease().orElseThrow();
        CompletableFuture<LockLostException> lost = new CompletableFuture<>();
        lease.onLost(lost::complete);

        await().atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(10))
                .until(() -> nodeBCanTake("long-job"));
        long freedAfterMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        assertThat(freedAfterMs)
                .as("freed no earlier than lockAtMostFor")
                .isGreaterThanOrEqualTo(atMost.toMillis() - 2);
        assertThat(lost.get(5, TimeUnit.SECONDS)).hasMessageContaining("lockAtMostFor");
        assertThat(lease.isValid()).as("the job's lease after lockAtMostFor").isFalse();
        assertThat(LocksmithLockProvider.currentLease())
                .as("a freed lock is no longer current")
                .isEmpty();
        lock.unlock(); // the job ends late: nothing left to release, no error
    }

    @Test
    void lockAtLeastForKeepsTheLockAfterAnEarlyUnlock() {
        Duration atLeast = Duration.ofMillis(400);
        long start = System.nanoTime();
        a.lock(config("short-job", Duration.ofMinutes(1), atLeast))
                .orElseThrow()
                .unlock();
        boolean took = nodeBCanTake("short-job");
        long checkedAfterMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        // On a loaded machine the check may end after lockAtLeastFor: only a take that ended before it is wrong.
        assertThat(!took || checkedAfterMs >= atLeast.toMillis() - 2)
                .as("another node took the lock %d ms after it was taken, before lockAtLeastFor", checkedAfterMs)
                .isTrue();

        await().atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(10))
                .until(() -> nodeBCanTake("short-job"));
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                .as("freed no earlier than lockAtLeastFor")
                .isGreaterThanOrEqualTo(atLeast.toMillis() - 2);
    }

    @Test
    void lockExtenderKeepsARunningJobsLockPastItsFirstLockAtMostFor() {
        DefaultLockingTaskExecutor executor = new DefaultLockingTaskExecutor(a);
        executor.executeWithLock(
                (Runnable) () -> {
                    LockExtender.extendActiveLock(Duration.ofSeconds(30), Duration.ZERO);
                    // Past the first lockAtMostFor (200 ms), the lock is still held and still the job's.
                    await().during(Duration.ofMillis(400))
                            .atMost(Duration.ofSeconds(2))
                            .pollInterval(Duration.ofMillis(50))
                            .until(() -> !nodeBCanTake("extended-job"));
                    assertThat(LocksmithLockProvider.currentLease()
                                    .orElseThrow()
                                    .isValid())
                            .isTrue();
                },
                config("extended-job", Duration.ofMillis(200), Duration.ZERO));
        assertThat(nodeBCanTake("extended-job")).as("after the extended job").isTrue();
    }

    @Test
    void closeReleasesEveryHeldLockAtOnceAndRefusesNewOnes() {
        a.lock(config("kept", Duration.ofMinutes(1), Duration.ofMinutes(1)))
                .orElseThrow()
                .unlock();
        SimpleLock running =
                a.lock(config("running", Duration.ofMinutes(1), Duration.ZERO)).orElseThrow();
        assertThat(nodeBCanTake("kept")).isFalse();

        a.close();

        assertThat(nodeBCanTake("kept"))
                .as("a lock kept for lockAtLeastFor, after close")
                .isTrue();
        assertThat(nodeBCanTake("running"))
                .as("a running job's lock, after close")
                .isTrue();
        running.unlock(); // the job ends after close: nothing to release, no error
        assertThatThrownBy(() -> a.lock(config("kept", Duration.ofMinutes(1), Duration.ZERO)))
                .isInstanceOf(IllegalStateException.class);
    }

    /** A lock lost in the store (its key deleted in Redis) tells the running job, frees, and cannot be extended. */
    @Test
    void aLockLostInTheStoreTellsTheJobAndCannotBeExtended() throws Exception {
        SimpleLock lock =
                a.lock(config("lost-job", Duration.ofMinutes(1), Duration.ZERO)).orElseThrow();
        LockLease lease = LocksmithLockProvider.currentLease().orElseThrow();
        CompletableFuture<LockLostException> lost = new CompletableFuture<>();
        lease.onLost(lost::complete);

        try (Jedis redis = new Jedis(URI.create(TestRedis.sharedUrl()))) {
            Set<String> keys = redis.keys("locksmith-shedlock-test:*:lock:" + prefix + "lost-job");
            assertThat(keys).as("the lock in Redis").hasSize(1);
            redis.del(keys.iterator().next());
        }

        assertThat(lost.get(5, TimeUnit.SECONDS)).as("the job's loss listener").isNotNull();
        assertThat(lease.isValid()).isFalse();
        assertThat(lock.extend(Duration.ofMinutes(1), Duration.ZERO))
                .as("extending a lost lock")
                .isEmpty();
        assertThat(nodeBCanTake("lost-job")).as("another node after the loss").isTrue();
    }

    /**
     * Where Locksmith differs from ShedLock's other providers on purpose: a crashed node's lock frees when the
     * store's lease runs out (this node's client: 1 s), long before its lockAtMostFor (5 minutes), because a live
     * holder renews its lease and a dead one cannot. ShedLock frees it at lockAtMostFor.
     */
    @Test
    void aCrashedNodesLockFreesAfterItsClientsLeaseTimeNotItsLockAtMostFor() throws Exception {
        String url = TestRedis.sharedLockUrl("leaseMs=1000&prefix=locksmith-shedlock-test:");
        Process node = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        CrashingNode.class.getName(),
                        url,
                        prefix,
                        "crashing-job",
                        String.valueOf(Duration.ofMinutes(5).toMillis()))
                .redirectErrorStream(true)
                .start();
        try {
            CompletableFuture<String> firstLine = CompletableFuture.supplyAsync(() -> {
                try (BufferedReader out =
                        new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8))) {
                    return out.readLine();
                } catch (java.io.IOException e) {
                    return "no output: " + e;
                }
            });
            assertThat(firstLine.get(20, TimeUnit.SECONDS))
                    .as("the crashing node's report")
                    .isEqualTo("LOCKED");
            assertThat(nodeBCanTake("crashing-job"))
                    .as("while the other node lives")
                    .isFalse();

            node.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            long killed = System.nanoTime();
            await().atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> nodeBCanTake("crashing-job"));
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed))
                    .as("freed after the dead node's lease time (1 s, plus a margin for a loaded machine), long"
                            + " before its lockAtMostFor (5 min)")
                    .isLessThan(5_000);
        } finally {
            node.destroyForcibly();
        }
    }
}
