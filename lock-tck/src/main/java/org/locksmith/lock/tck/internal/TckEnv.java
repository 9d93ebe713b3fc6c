package org.locksmith.lock.tck.internal;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.tck.LockFaults;
import org.locksmith.lock.tck.TckThreads;
import org.locksmith.lock.tck.TckTimings;

/**
 * Everything one TCK test needs: the backend's hooks, the clients it opened (closed at the end), unique keys,
 * feature and hook gates (JUnit aborts with a reason), named daemon threads, worker processes, and the context
 * every assertion message carries. Not API: backend authors only see {@link org.locksmith.lock.tck.LockTck}.
 */
public final class TckEnv implements AutoCloseable {

    /** Prefix of every reason for a test skipped because a feature is not declared; the report keys on it. */
    public static final String NOT_DECLARED = "not declared: ";

    /**
     * How the reason of a test skipped for a missing hook (worker URL, fault, store view) starts: a contract with
     * such a test reads "unverified", never "pass".
     */
    public static final String NEEDS = "needs ";

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final AtomicInteger THREADS = new AtomicInteger();

    /** The backend author's hooks, as {@link org.locksmith.lock.tck.LockTck} exposes them. */
    public interface Hooks {
        LockClient newClient();

        Optional<String> workerUrl();

        LockFaults faults();

        OptionalInt storeEntries(String key);

        /** Requests the store has served so far; empty if the test cannot count them. */
        default OptionalLong storeOperations() {
            return OptionalLong.empty();
        }

        /** Connections the clients hold to the store; empty if the test cannot count them. */
        default OptionalInt openConnections() {
            return OptionalInt.empty();
        }

        TckTimings timings();
    }

    private final Hooks hooks;
    private final String contract;
    private final String testName;
    private final String runId;
    private final Map<LockClient, String> labels = Collections.synchronizedMap(new IdentityHashMap<>());
    private final List<LockClient> clients = Collections.synchronizedList(new ArrayList<>());
    private final List<AutoCloseable> resources = Collections.synchronizedList(new ArrayList<>());
    private final Map<String, String> notes = Collections.synchronizedMap(new LinkedHashMap<>());
    private final ExecutorService threads;
    private volatile String backend = "?";
    private volatile Set<LockFeature> features;
    private volatile TckTimings timings;

    public TckEnv(Hooks hooks, String testName) {
        this.hooks = hooks;
        this.testName = testName;
        this.contract = Contracts.describe(testName);
        byte[] id = new byte[4];
        RANDOM.nextBytes(id);
        this.runId = String.format(Locale.ROOT, "%02x%02x%02x%02x", id[0], id[1], id[2], id[3]);
        this.threads = Executors.newCachedThreadPool(
                task -> TckThreads.newThread("tck-" + testName + "-" + THREADS.incrementAndGet(), task));
    }

    /** The backend name reported by the first client ({@link LockClient#backend()}), or "?" before. */
    public String backend() {
        return backend;
    }

    public Map<String, String> notes() {
        return notes;
    }

    /** Records a measurement for the report (for example the time until a killed holder's lock was granted). */
    public void note(String name, Object value) {
        notes.put(name, String.valueOf(value));
        System.out.println("[locksmith-tck] " + backend + " " + testName + ": " + name + " = " + value);
    }

    public TckTimings timings() {
        TckTimings t = timings;
        if (t == null) {
            t = hooks.timings();
            timings = t;
        }
        return t;
    }

    /** Opens a fresh client, remembered under {@code label} for messages and closed at the end of the test. */
    public LockClient client(String label) {
        LockClient c = hooks.newClient();
        if (c == null) {
            throw new AssertionError("newClient() returned null");
        }
        clients.add(c);
        labels.put(c, label);
        if (features == null) {
            backend = c.backend();
            features = c.features();
        }
        return c;
    }

    public Set<LockFeature> features() {
        if (features == null) {
            client("probe");
        }
        return features;
    }

    public boolean has(LockFeature f) {
        return features().contains(f);
    }

    /** Aborts the test (JUnit skip) with a reason naming the feature unless the client declares it. */
    public void requireFeature(LockFeature f) {
        Assumptions.assumeTrue(has(f), () -> NOT_DECLARED + f);
    }

    /** Aborts the test unless the client does not declare the feature: the test checks the undeclared side. */
    public void requireUndeclared(LockFeature f) {
        Assumptions.assumeFalse(has(f), () -> "declared: " + f + " (this test checks the side without it)");
    }

    public LockFaults faults() {
        LockFaults f = hooks.faults();
        return f == null ? LockFaults.NONE : f;
    }

    public boolean canInflict(LockFaults.Fault fault) {
        return faults().supported().contains(fault);
    }

    public void requireFault(LockFaults.Fault fault) {
        Assumptions.assumeTrue(canInflict(fault), () -> NEEDS + "fault " + fault + " (faults() does not offer it)");
    }

    public Optional<String> workerUrl() {
        return hooks.workerUrl();
    }

    public String requireWorkerUrl() {
        Optional<String> url = hooks.workerUrl();
        Assumptions.assumeTrue(url.isPresent(), NEEDS + "workerUrl() for worker processes (it is empty)");
        return url.get();
    }

    public OptionalInt storeEntries(String key) {
        return hooks.storeEntries(key);
    }

    public int requireStoreEntries(String key) {
        OptionalInt n = hooks.storeEntries(key);
        Assumptions.assumeTrue(n.isPresent(), NEEDS + "storeEntries(key) (it is empty)");
        return n.getAsInt();
    }

    public OptionalLong storeOperations() {
        return hooks.storeOperations();
    }

    public long requireStoreOperations() {
        OptionalLong n = hooks.storeOperations();
        Assumptions.assumeTrue(n.isPresent(), NEEDS + "storeOperations() (it is empty)");
        return n.getAsLong();
    }

    public OptionalInt openConnections() {
        return hooks.openConnections();
    }

    public int requireOpenConnections() {
        OptionalInt n = hooks.openConnections();
        Assumptions.assumeTrue(n.isPresent(), NEEDS + "openConnections() (it is empty)");
        return n.getAsInt();
    }

    /** A key unique to this run and test, so runs on shared servers never collide. */
    public String key(String suffix) {
        return "tck-" + runId + "-" + shortName() + "-" + suffix;
    }

    /** The prefix unique to this test; keys built from it stay unique. */
    public String keyPrefix() {
        return "tck-" + runId + "-";
    }

    private String shortName() {
        int us = testName.indexOf('_');
        return us > 0 ? testName.substring(0, us) : testName;
    }

    /** "[c05 Deadlines | backend=redis | key='...' | client=B] " — the start of every assertion message. */
    public String at(LockClient client, String key) {
        String label = client == null ? "-" : labels.getOrDefault(client, "?");
        return "[" + contract + " | backend=" + backend + " | key='" + printable(key) + "' | client=" + label + "] ";
    }

    /** The contract and the backend, as every failure message of the kit starts. */
    public String at() {
        return "[" + contract + " | backend=" + backend + "] ";
    }

    public String at(String key) {
        return "[" + contract + " | backend=" + backend + " | key='" + printable(key) + "'] ";
    }

    private static String printable(String key) {
        if (key == null) {
            return "null";
        }
        String k = key.length() > 80 ? key.substring(0, 60) + "...(" + key.length() + " chars)" : key;
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < k.length(); i++) {
            char c = k.charAt(i);
            if (c < 0x20) {
                s.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
            } else {
                s.append(c);
            }
        }
        return s.toString();
    }

    /** Runs {@code task} on a named daemon thread of this test; the thread is stopped at the end of the test. */
    public <T> Future<T> fork(Callable<T> task) {
        return threads.submit(task);
    }

    public void closeAtEnd(AutoCloseable resource) {
        resources.add(resource);
    }

    public static long millisSince(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    public static Duration allow(Duration d) {
        return TckTimings.allow(d);
    }

    @Override
    public void close() {
        threads.shutdownNow();
        List<AutoCloseable> rs;
        synchronized (resources) {
            rs = new ArrayList<>(resources);
        }
        Collections.reverse(rs);
        for (AutoCloseable r : rs) {
            try {
                r.close();
            } catch (Exception e) {
                System.err.println("[locksmith-tck] closing " + r + " failed: " + e);
            }
        }
        List<LockClient> cs;
        synchronized (clients) {
            cs = new ArrayList<>(clients);
        }
        // All at once: a client's close may wait on its store (a ZooKeeper client's takes 100 ms), and the clients
        // of one test are independent of each other.
        List<Thread> closing = new ArrayList<>();
        for (LockClient c : cs) {
            Thread t = TckThreads.newThread("tck-close-" + labels.get(c), () -> {
                try {
                    c.close();
                } catch (RuntimeException e) {
                    System.err.println("[locksmith-tck] closing client " + labels.get(c) + " failed: " + e);
                }
            });
            t.start();
            closing.add(t);
        }
        try {
            for (Thread t : closing) {
                t.join();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            threads.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
