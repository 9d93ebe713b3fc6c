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
        Thread.sleep(150); // let the waiter block in the store
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
        Thread.sleep(100); // a deliberate pause: let the waiter block in the store before A is closed
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
}
