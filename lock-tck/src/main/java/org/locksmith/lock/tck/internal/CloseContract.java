package org.locksmith.lock.tck.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.tck.TckTimings;

/**
 * Contract 13: close releases leases, fails waiters promptly, leaks no threads or connections, and ends all further
 * use.
 */
public final class CloseContract {
    private final TckEnv env;

    public CloseContract(TckEnv env) {
        this.env = env;
    }

    public void releasesLeases() throws Exception {
        LockClient a = env.client("A");
        LockClient b = env.client("B");
        String k1 = env.key("close-1");
        String k2 = env.key("close-2");
        LockLease l1 = a.lock(k1).acquire(Duration.ofSeconds(5));
        if (a.features().contains(LockFeature.REENTRANT)) {
            a.lock(k1).acquire(Duration.ofSeconds(5));
        }
        LockLease l2 = a.lock(k2).acquire(Duration.ofSeconds(5));
        a.close();
        Probes.assertGrantable(env, b, k1, "at once after client A, its holder, was closed");
        Probes.assertGrantable(env, b, k2, "at once after client A, its holder, was closed");
        assertThat(l1.isValid()).as(env.at(a, k1) + "lease of a closed client").isFalse();
        assertThat(l2.isValid()).as(env.at(a, k2) + "lease of a closed client").isFalse();
        assertThatThrownBy(l1::release)
                .as(env.at(a, k1) + "release of a lease its closed client already released")
                .isInstanceOfAny(IllegalStateException.class, IllegalMonitorStateException.class);
    }

    public void failsWaitersPromptly() throws Exception {
        LockClient holder = env.client("H");
        LockClient a = env.client("A");
        String key = env.key("close-waiter");
        LockLease held = holder.lock(key).acquire(Duration.ofSeconds(5));
        java.util.OptionalInt alone = env.storeEntries(key);
        AtomicLong failedAt = new AtomicLong();
        Future<Throwable> waiter = env.fork(() -> {
            try {
                a.lock(key).acquire(Duration.ofSeconds(30)).release();
                return null;
            } catch (Throwable t) {
                failedAt.set(System.nanoTime());
                return t;
            }
        });
        Probes.awaitQueued(env, key, alone, 1, Duration.ofMillis(150), Probes.QUEUE_SETTLE, "the waiter");
        long closedAt = System.nanoTime();
        a.close();
        Throwable thrown = waiter.get(15, TimeUnit.SECONDS);
        assertThat(thrown)
                .as(env.at(a, key) + "a waiter of a client being closed must fail with IllegalStateException")
                .isInstanceOf(IllegalStateException.class);
        long took = failedAt.get() - closedAt;
        assertThat(took)
                .as(env.at(a, key) + "the waiter failed " + Probes.ms(took) + " after close() began")
                .isLessThanOrEqualTo(TckEnv.allow(Duration.ofMillis(500)).toNanos());
        held.release();
        LockClient c = env.client("C");
        Probes.assertGrantable(env, c, key, "after the closed client's waiter was failed");
    }

    /**
     * Name prefixes of threads that are not a client's to stop, even if started while it was open: the JVM's shared
     * pools and service threads, and a JDBC driver's one thread per JVM (owned by the driver, which no client can
     * unload). The TCK's own threads of this test are told apart by identity, not by name: a ZooKeeper client names
     * its threads after the thread that opens it ({@code tck-c13-clients-SendThread(...)}).
     */
    static final List<String> NOT_THE_CLIENTS = List.of(
            "ForkJoinPool.commonPool-",
            "CompletableFutureDelayScheduler",
            "process reaper",
            "Attach Listener",
            "Signal Dispatcher",
            "Common-Cleaner",
            "Keep-Alive-Timer",
            "mysql-cj-abandoned-connection-cleanup");

    /**
     * c13: every thread started while the clients under test were open ends soon after they are closed, whoever
     * started it: the core, the backend, or a library under it (a connection pool's housekeeper, a ZooKeeper
     * client's event thread), whatever its name.
     *
     * <p>Threads are told apart by their group rather than by name. The clients are opened, used and closed only on
     * threads of a thread group of this test, and a thread inherits the group of the thread that creates it (as do
     * thread factories created on it, such as {@link java.util.concurrent.Executors#defaultThreadFactory()}), so
     * whatever the clients start lands in that group, while threads the test's own servers start meanwhile do not (an
     * in-process ZooKeeper server starts its worker threads lazily, as requests arrive). A thread counts as leaked if
     * it did not exist before the first client was opened, belongs to the group, is neither one of the two threads
     * the TCK starts there nor one of {@link #NOT_THE_CLIENTS}, and is still alive once twice the operation timeout
     * plus a second has passed after close.
     */
    public void leaksNoThreads() throws Exception {
        Set<Thread> before = liveThreads();
        ThreadGroup clientThreads = new ThreadGroup("tck-c13-clients");
        String key = env.key("close-threads");
        AtomicReference<LockClient> clientA = new AtomicReference<>();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Set<Thread> tckThreads = Collections.newSetFromMap(new java.util.concurrent.ConcurrentHashMap<>());
        Thread scenario = new Thread(
                clientThreads,
                () -> {
                    try {
                        useAndClose(clientThreads, key, clientA, tckThreads);
                    } catch (Throwable t) {
                        failed.set(t);
                    }
                },
                "tck-c13-clients");
        scenario.setDaemon(true);
        tckThreads.add(scenario);
        scenario.start();
        scenario.join(TckEnv.allow(Duration.ofSeconds(60)).toMillis());
        if (scenario.isAlive()) {
            scenario.interrupt();
            throw new AssertionError(env.at(clientA.get(), key) + "opening, using and closing two clients did not end "
                    + "within 60 s; the TCK's thread is" + stackOf(scenario));
        }
        if (failed.get() instanceof Error e) {
            throw e;
        }
        if (failed.get() != null) {
            throw new AssertionError(env.at(clientA.get(), key) + "using the clients failed", failed.get());
        }
        TckTimings t = env.timings();
        Duration bound = TckEnv.allow(t.operationTimeout().multipliedBy(2).plus(Duration.ofSeconds(1)));
        try {
            Awaitility.await("threads started by the clients to end after close")
                    .atMost(bound)
                    .pollInterval(Duration.ofMillis(50))
                    .pollInSameThread()
                    .untilAsserted(() -> {
                        List<Thread> leaked = liveThreads().stream()
                                .filter(th -> !before.contains(th)
                                        && !tckThreads.contains(th)
                                        && startedBy(th, clientThreads)
                                        && !notTheClients(th))
                                .toList();
                        if (!leaked.isEmpty()) {
                            throw new AssertionError(env.at(clientA.get(), key) + leaked.size() + " thread(s) started "
                                    + "while clients H and A were open still run " + bound.toMillis() + " ms "
                                    + "(operation timeout x 2 + 1 s, x factor) after both were closed: "
                                    + describe(leaked)
                                    + ". Closing a client must stop every thread it, its backend "
                                    + "or its libraries started (shut pools and executors down, close "
                                    + "the store client)");
                        }
                    });
        } catch (ConditionTimeoutException e) {
            throw e.getCause() instanceof AssertionError leak ? leak : new AssertionError(e.getMessage(), e);
        }
    }

    /**
     * c13: closing clients closes their connections to the store, counted by the test's {@link
     * org.locksmith.lock.tck.LockTck#openConnections()} hook: once both clients, one of which held a key and one of
     * which gave up waiting for it, are closed, the count must return to what it was before they were opened.
     */
    public void leaksNoConnections() throws Exception {
        int before = env.requireOpenConnections();
        LockClient holder = env.client("H");
        LockClient a = env.client("A");
        String key = env.key("close-connections");
        LockLease held = holder.lock(key).acquire(Duration.ofSeconds(5));
        assertThat(a.lock(key).tryAcquire(Duration.ofMillis(50)))
                .as(env.at(a, key) + "a timed waiter while H holds the key")
                .isEmpty();
        try (LockLease other = a.lock(env.key("close-connections-2")).acquire(Duration.ofSeconds(5))) {
            assertThat(other.isValid()).isTrue();
        }
        int open = env.openConnections().orElse(before);
        env.note("store connections of two open clients", open - before);
        held.release();
        a.close();
        holder.close();
        Duration bound =
                TckEnv.allow(env.timings().operationTimeout().multipliedBy(2).plus(Duration.ofSeconds(1)));
        try {
            Awaitility.await("connections of the closed clients to close")
                    .atMost(bound)
                    .pollInterval(Duration.ofMillis(50))
                    .untilAsserted(() -> assertThat(env.openConnections().orElse(before))
                            .as(env.at(a, key) + "connections to the store " + bound.toMillis() + " ms (operation "
                                    + "timeout x 2 + 1 s, x factor) after clients H and A were closed; " + before
                                    + " before they were opened, " + open + " while they were open")
                            .isLessThanOrEqualTo(before));
        } catch (ConditionTimeoutException e) {
            throw e.getCause() instanceof AssertionError leak ? leak : new AssertionError(e.getMessage(), e);
        }
    }

    /** Opens a holder and a client with a waiter and a lease, then closes both: runs on the test's thread group. */
    private void useAndClose(ThreadGroup group, String key, AtomicReference<LockClient> clientA, Set<Thread> tckThreads)
            throws Exception {
        LockClient holder = env.client("H");
        LockClient a = env.client("A");
        clientA.set(a);
        LockLease held = holder.lock(key).acquire(Duration.ofSeconds(5));
        AtomicReference<Throwable> waiterFailure = new AtomicReference<>();
        Thread waiter = new Thread(
                group,
                () -> {
                    try {
                        a.lock(key).acquire(Duration.ofSeconds(30)).release();
                    } catch (IllegalStateException expected) {
                        // closed while waiting
                    } catch (Throwable t) {
                        waiterFailure.set(t);
                    }
                },
                "tck-c13-waiter");
        waiter.setDaemon(true);
        tckThreads.add(waiter);
        waiter.start();
        try (LockLease other = a.lock(env.key("close-threads-2")).acquire(Duration.ofSeconds(5))) {
            assertThat(other.isValid()).isTrue();
        }
        // Not awaited in the store: the store view's hook must not run on the clients' thread group.
        Probes.quietPeriod(Duration.ofMillis(100), "no event seen from the clients' threads: the waiter blocks");
        held.release();
        a.close();
        holder.close();
        waiter.join(TimeUnit.SECONDS.toMillis(15));
        assertThat(waiter.isAlive())
                .as(env.at(a, key) + "a waiter of client A still waits 15 s after A was closed")
                .isFalse();
        if (waiterFailure.get() != null) {
            throw new AssertionError(env.at(a, key) + "the waiter of client A failed", waiterFailure.get());
        }
    }

    private static Set<Thread> liveThreads() {
        Set<Thread> live = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive()) {
                live.add(t);
            }
        }
        return live;
    }

    private static boolean startedBy(Thread t, ThreadGroup group) {
        for (ThreadGroup g = t.getThreadGroup(); g != null; g = g.getParent()) {
            if (g == group) {
                return true;
            }
        }
        return false;
    }

    private static boolean notTheClients(Thread t) {
        return NOT_THE_CLIENTS.stream().anyMatch(prefix -> t.getName().startsWith(prefix));
    }

    private static String describe(List<Thread> threads) {
        return threads.stream()
                .map(t -> "'" + t.getName() + "' (" + (t.isDaemon() ? "daemon" : "non-daemon") + ", " + t.getState()
                        + stackOf(t) + ")")
                .collect(Collectors.joining(", "));
    }

    /** Where the thread is, named by its first frame outside the JDK (the code that started it, usually). */
    private static String stackOf(Thread t) {
        StackTraceElement[] stack = t.getStackTrace();
        for (StackTraceElement e : stack) {
            String c = e.getClassName();
            if (!c.startsWith("java.") && !c.startsWith("jdk.") && !c.startsWith("sun.")) {
                return " in " + e;
            }
        }
        return stack.length == 0 ? "" : " in " + stack[0];
    }

    public void noFurtherUse() throws Exception {
        LockClient a = env.client("A");
        String key = env.key("closed-use");
        var lock = a.lock(key);
        a.close();
        a.close(); // idempotent
        assertThatThrownBy(() -> a.lock(key))
                .as(env.at(a, key) + "lock(key) after close")
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> lock.acquire(Duration.ofSeconds(1)))
                .as(env.at(a, key) + "acquire through a lock obtained before close")
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(lock::tryAcquire)
                .as(env.at(a, key) + "tryAcquire after close")
                .isInstanceOf(IllegalStateException.class);
        assertThat(a.backend()).as("backend() after close").isNotBlank();
        assertThat(a.features()).as("features() after close").isNotNull();
    }

    /**
     * C13.6: closing a client cancels its waiters that still wait, and leaves no thread and no queue entry of theirs:
     * client H holds a key (opened outside the thread group of the check); client B, opened, used and closed on
     * threads of a group of the kit's, waits for it on a thread ({@code acquire(30 s)}) and with {@code
     * acquireAsync(30 s)}, and is closed while both still wait (H never releases before). The waiting thread must end
     * by {@code IllegalStateException} and the future fail with it, within {@code op × f}; every thread that came up
     * in the group must have ended within {@code (2 × op + 1 s) × f} after the close, as in C13.4; {@code
     * storeEntries(key)} must be back to what it was while H held the key alone within {@code op × f}; and once H
     * releases, another client's {@code tryAcquire()} must be granted.
     */
    public void cancelsWaitersWithoutLeaks() throws Exception {
        Set<Thread> before = liveThreads();
        LockClient holder = env.client("H");
        String key = env.key("close-cancels-waiters");
        LockLease held = holder.lock(key).acquire(Duration.ofSeconds(5));
        java.util.OptionalInt alone = env.storeEntries(key);
        ThreadGroup clientThreads = new ThreadGroup("tck-c13-cancelled-waiters");
        AtomicReference<LockClient> clientB = new AtomicReference<>();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Set<Thread> tckThreads = Collections.newSetFromMap(new java.util.concurrent.ConcurrentHashMap<>());
        Thread scenario = new Thread(
                clientThreads,
                () -> {
                    try {
                        closeWhileWaiting(clientThreads, key, alone, clientB, tckThreads);
                    } catch (Throwable t) {
                        failed.set(t);
                    }
                },
                "tck-c13-cancelled-waiters");
        scenario.setDaemon(true);
        tckThreads.add(scenario);
        scenario.start();
        scenario.join(TckEnv.allow(Duration.ofSeconds(60)).toMillis());
        if (scenario.isAlive()) {
            scenario.interrupt();
            throw new AssertionError(env.at(clientB.get(), key) + "closing client B with two waiters did not end"
                    + " within 60 s; the TCK's thread is" + stackOf(scenario));
        }
        if (failed.get() instanceof Error e) {
            throw e;
        }
        if (failed.get() != null) {
            throw new AssertionError(
                    env.at(clientB.get(), key) + "closing client B with two waiters failed", failed.get());
        }
        TckTimings t = env.timings();
        Duration bound = TckEnv.allow(t.operationTimeout().multipliedBy(2).plus(Duration.ofSeconds(1)));
        try {
            Awaitility.await("threads of a client closed while it had waiters to end")
                    .atMost(bound)
                    .pollInterval(Duration.ofMillis(50))
                    .pollInSameThread()
                    .untilAsserted(() -> {
                        List<Thread> leaked = liveThreads().stream()
                                .filter(th -> !before.contains(th)
                                        && !tckThreads.contains(th)
                                        && startedBy(th, clientThreads)
                                        && !notTheClients(th))
                                .toList();
                        if (!leaked.isEmpty()) {
                            throw new AssertionError(env.at(clientB.get(), key) + leaked.size() + " thread(s) started"
                                    + " while client B was open still run " + bound.toMillis() + " ms (operation"
                                    + " timeout x 2 + 1 s, x factor) after B was closed while a thread of it and an"
                                    + " acquireAsync waited for a held key: " + describe(leaked) + ". Cancelling a"
                                    + " waiter, by close() too, must stop what the wait started");
                        }
                    });
        } catch (ConditionTimeoutException e) {
            throw e.getCause() instanceof AssertionError leak ? leak : new AssertionError(e.getMessage(), e);
        }
        if (alone.isPresent()) {
            Duration op = TckEnv.allow(t.operationTimeout());
            try {
                Awaitility.await("store entries of the key after its waiters' client was closed")
                        .atMost(op)
                        .pollInterval(Duration.ofMillis(20))
                        .untilAsserted(() -> assertThat(env.requireStoreEntries(key))
                                .as(env.at(clientB.get(), key) + "store entries of the key, held by H, " + op.toMillis()
                                        + " ms after client B was closed while two waiters of it waited ("
                                        + alone.getAsInt() + " while H held it alone)")
                                .isLessThanOrEqualTo(alone.getAsInt()));
            } catch (ConditionTimeoutException e) {
                throw e.getCause() instanceof AssertionError left ? left : new AssertionError(e.getMessage(), e);
            }
        }
        held.release();
        Probes.assertGrantable(
                env,
                env.client("N"),
                key,
                "after its holder released it, its other client's waiters cancelled by close");
    }

    /** Client B waits on a thread and asynchronously for the held key, and is closed: runs on the test's group. */
    private void closeWhileWaiting(
            ThreadGroup group,
            String key,
            java.util.OptionalInt alone,
            AtomicReference<LockClient> clientB,
            Set<Thread> tckThreads)
            throws Exception {
        LockClient b = env.client("B");
        clientB.set(b);
        AtomicReference<Throwable> waiterOutcome = new AtomicReference<>();
        Thread waiter = new Thread(
                group,
                () -> {
                    try {
                        b.lock(key).acquire(Duration.ofSeconds(30)).release();
                        waiterOutcome.set(new AssertionError("granted"));
                    } catch (Throwable th) {
                        waiterOutcome.set(th);
                    }
                },
                "tck-c13-sync-waiter");
        waiter.setDaemon(true);
        tckThreads.add(waiter);
        waiter.start();
        java.util.concurrent.CompletableFuture<LockLease> async = b.lock(key).acquireAsync(Duration.ofSeconds(30));
        if (alone.isPresent()) {
            int expected = alone.getAsInt() + 2;
            try {
                Awaitility.await()
                        .atMost(Duration.ofMillis(300))
                        .pollInterval(Duration.ofMillis(5))
                        .until(() -> env.storeEntries(key).orElse(expected) >= expected);
            } catch (ConditionTimeoutException e) {
                // waiters the store does not show: the 300 ms were their head start
            }
        } else {
            Probes.quietPeriod(Duration.ofMillis(150), "no store view: the head start of B's two waiters");
        }
        assertThat(waiter.isAlive())
                .as(env.at(b, key) + "a thread of client B waiting in acquire(30 s) for a key H holds")
                .isTrue();
        assertThat(async.isDone())
                .as(env.at(b, key) + "an acquireAsync(30 s) of client B for a key H holds is done")
                .isFalse();
        b.close();
        Duration op = TckEnv.allow(env.timings().operationTimeout());
        waiter.join(op.toMillis());
        assertThat(waiter.isAlive())
                .as(env.at(b, key) + "a waiting thread of client B still waits " + op.toMillis() + " ms after B was"
                        + " closed")
                .isFalse();
        assertThat(waiterOutcome.get())
                .as(env.at(b, key) + "how the waiting thread of client B ended when B was closed")
                .isInstanceOf(IllegalStateException.class);
        assertThat(causeOf(async, op))
                .as(env.at(b, key) + "how the pending acquireAsync of client B ended when B was closed")
                .isInstanceOf(IllegalStateException.class);
    }

    private static Throwable causeOf(java.util.concurrent.CompletableFuture<LockLease> f, Duration within)
            throws InterruptedException {
        try {
            LockLease granted = f.get(within.toMillis(), TimeUnit.MILLISECONDS);
            granted.release();
            return new AssertionError("granted");
        } catch (java.util.concurrent.ExecutionException e) {
            return e.getCause();
        } catch (java.util.concurrent.TimeoutException e) {
            return e;
        } catch (java.util.concurrent.CancellationException e) {
            return e;
        }
    }
}
