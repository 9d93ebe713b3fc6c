package org.locksmith.lock.bench;

import com.sun.management.OperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.bench.VirtualThreadsAtScale.Backend;

/**
 * What waiting costs: many virtual threads (10,000 by default) queue on one key another client holds, and the
 * process's CPU time is read over a window in which nothing happens (no grant, no release). Waiting should cost
 * nothing then; what it costs is the core's and the backend's timers and polls per waiter.
 *
 * <pre>
 * IdleWaiters [--threads=10000] [--rampS=0] [--settleS=5] [--windowS=10] [--pool=32]
 *             [--backends=redis,mysql,postgres,zookeeper] [--out=target/bench/idle-waiters.md]
 * </pre>
 *
 * <p>Per backend: the process CPU time over the window with the holder alone (the baseline: the clients' renewal
 * and the JVM), and again once every waiter has queued and {@code --settleS} passed; the CPU time of the platform
 * threads by name (the core's watchdog, the backend's threads) over the second window; then every waiter is
 * interrupted, and the report gives how long until all had thrown {@code InterruptedException}, and how long after
 * the holder's release another client gets the key (what an interrupted waiter left queued in the store delays it;
 * at most 10 s). Bounded: each waiter's timeout is settle + window + 60 s, and the interrupts get 30 s.
 *
 * <p>Needs Java 21+ (virtual threads, looked up by reflection as this module builds for 17): {@code ./mvnw -B
 * -Pvthreads -DskipTests -pl lock-bench -am verify -Dvthreads.main=org.locksmith.lock.bench.IdleWaiters
 * -Dvthreads.args=--out=target/bench/idle-waiters.md -Dvthreads.java=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}.
 */
public final class IdleWaiters {
    private IdleWaiters() {}

    record Settings(
            int threads, Duration ramp, Duration settle, Duration window, int pool, Set<Backend> backends, Path out) {
        static Settings parse(String[] args) {
            int threads = 10_000;
            Duration ramp = Duration.ZERO;
            Duration settle = Duration.ofSeconds(5);
            Duration window = Duration.ofSeconds(10);
            int pool = 32;
            Set<Backend> backends = EnumSet.allOf(Backend.class);
            Path out = Path.of("target/bench/idle-waiters.md");
            // -Dvthreads.args="--a=1 --b=2" reaches main as one argument: split it
            for (String arg : String.join(" ", args).trim().split("\\s+")) {
                if (arg.isEmpty()) {
                    continue;
                }
                String value = arg.substring(arg.indexOf('=') + 1);
                if (arg.startsWith("--threads=")) {
                    threads = Integer.parseInt(value);
                } else if (arg.startsWith("--rampS=")) {
                    ramp = Duration.ofSeconds(Long.parseLong(value));
                } else if (arg.startsWith("--settleS=")) {
                    settle = Duration.ofSeconds(Long.parseLong(value));
                } else if (arg.startsWith("--windowS=")) {
                    window = Duration.ofSeconds(Long.parseLong(value));
                } else if (arg.startsWith("--pool=")) {
                    pool = Integer.parseInt(value);
                } else if (arg.startsWith("--backends=")) {
                    backends = EnumSet.noneOf(Backend.class);
                    for (String b : value.split(",")) {
                        backends.add(Backend.valueOf(b.trim().toUpperCase(Locale.ROOT)));
                    }
                } else if (arg.startsWith("--out=")) {
                    out = Path.of(value);
                } else {
                    throw new IllegalArgumentException(
                            "Unknown argument " + arg + "; use --threads=N --rampS=N --settleS=N"
                                    + " --windowS=N --pool=N --backends=redis,mysql,postgres,zookeeper --out=FILE");
                }
            }
            if (threads < 1 || threads > 100_000 || pool < 1 || window.isZero() || window.toSeconds() > 120) {
                throw new IllegalArgumentException("need 1 <= threads <= 100000, pool >= 1, 1 <= windowS <= 120");
            }
            return new Settings(threads, ramp, settle, window, pool, backends, out);
        }
    }

    record Outcome(
            Backend backend,
            double baselineCpuPercent,
            double waitingCpuPercent,
            String topThreads,
            int waiting,
            double interruptMillis,
            int interrupted,
            boolean freeAfter,
            double freeMillis,
            String error) {}

    public static void main(String[] args) throws Exception {
        Settings s;
        try {
            s = Settings.parse(args);
            VirtualThreadsAtScale.newVirtualThreadPerTaskExecutor().shutdown();
        } catch (IllegalArgumentException | UnsupportedOperationException e) {
            System.err.println("[idle] " + e.getMessage());
            System.exit(2);
            return;
        }
        String started = ZonedDateTime.now(ZoneOffset.UTC)
                .format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'", Locale.ROOT));
        String loadBefore = Environment.load();
        List<Outcome> outcomes = new ArrayList<>();
        try (Stores stores = Stores.start()) {
            try {
                for (Backend backend : s.backends()) {
                    Outcome o = run(backend, stores, s);
                    outcomes.add(o);
                    log(String.format(
                            Locale.ROOT,
                            "%s: CPU %.2f %% of one core with the holder alone, %.2f %% with %d waiting; top"
                                    + " threads %s; %d interrupted in %.0f ms; another client got the key %.0f ms after the release%s",
                            backend.title,
                            o.baselineCpuPercent(),
                            o.waitingCpuPercent(),
                            o.waiting(),
                            o.topThreads(),
                            o.interrupted(),
                            o.interruptMillis(),
                            o.freeMillis(),
                            o.error() == null ? "" : "; ERROR: " + o.error()));
                }
            } finally {
                stores.removeRunState();
            }
        }
        String md = markdown(s, outcomes, started, loadBefore, Environment.load());
        System.out.println(md);
        Path out = s.out().toAbsolutePath();
        Files.createDirectories(out.getParent());
        Files.writeString(out, md, StandardCharsets.UTF_8);
        log("wrote " + out);
        if (outcomes.stream().anyMatch(o -> o.error() != null)) {
            System.exit(1);
        }
    }

    static Outcome run(Backend backend, Stores stores, Settings s) throws Exception {
        String url = backend.url(stores, s.pool());
        String key = "idle";
        OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Duration timeout = s.ramp().plus(s.settle()).plus(s.window()).plus(Duration.ofSeconds(60));
        AtomicInteger started = new AtomicInteger();
        AtomicInteger interrupted = new AtomicInteger();
        AtomicInteger other = new AtomicInteger();
        Map<String, Integer> others = new java.util.concurrent.ConcurrentHashMap<>();
        String error = null;
        double baseline;
        double waitingCpu;
        String top;
        double interruptMillis = Double.NaN;
        boolean freeAfter;
        double freeMillis;
        log(backend.title + ": " + s.threads() + " virtual threads wait on one held key, " + url);
        try (LockClient holder = Locks.open(url);
                LockClient waiters = Locks.open(url);
                LockClient probe = Locks.open(url)) {
            LockLease held = holder.lock(key).acquire(Duration.ofSeconds(10));
            Thread.sleep(1000); // the first acquire's class loading and JIT settle
            baseline = cpuPercent(os, s.window());
            ExecutorService executor = VirtualThreadsAtScale.newVirtualThreadPerTaskExecutor();
            long rampStart = System.nanoTime();
            for (int i = 0; i < s.threads(); i++) {
                // spread over --rampS: a store that takes each waiter's queue entry durably (ZooKeeper) needs time
                long due = rampStart + s.ramp().toNanos() * i / s.threads();
                long early = due - System.nanoTime();
                if (early > 0) {
                    TimeUnit.NANOSECONDS.sleep(early);
                }
                executor.execute(() -> {
                    started.incrementAndGet();
                    try (LockLease lease = waiters.lock(key).acquire(timeout)) {
                        other.incrementAndGet(); // granted: nothing released the key, so this is a defect
                        others.merge("granted", 1, Integer::sum);
                    } catch (InterruptedException e) {
                        interrupted.incrementAndGet();
                    } catch (Exception | Error e) {
                        other.incrementAndGet();
                        others.merge(e.getClass().getSimpleName() + ": " + e.getMessage(), 1, Integer::sum);
                    }
                });
            }
            Thread.sleep(s.settle().toMillis()); // every waiter queues: in the store, or locally for a connection
            Map<String, Long> before = threadCpu(threads);
            waitingCpu = cpuPercent(os, s.window());
            Map<String, Long> after = threadCpu(threads);
            top = topThreads(before, after, s.window());
            int waiting = started.get() - interrupted.get() - other.get();
            long t0 = System.nanoTime();
            executor.shutdownNow(); // interrupts every waiter
            if (!executor.awaitTermination(30, TimeUnit.SECONDS)) {
                error = (s.threads() - interrupted.get() - other.get()) + " waiters still running 30 s after their"
                        + " interrupt";
            } else {
                interruptMillis = (System.nanoTime() - t0) / 1e6;
            }
            if (other.get() > 0) {
                error = (error == null ? "" : error + "; ") + other.get() + " waiters ended other than by interrupt: "
                        + others;
            }
            held.release();
            long r0 = System.nanoTime();
            Optional<LockLease> free = probe.lock(key).tryAcquire(Duration.ofSeconds(10));
            freeMillis = (System.nanoTime() - r0) / 1e6;
            freeAfter = free.isPresent();
            free.ifPresent(LockLease::release);
            if (!freeAfter) {
                error = (error == null ? "" : error + "; ") + "the key was not free within 10 s of the release";
            }
            return new Outcome(
                    backend,
                    baseline,
                    waitingCpu,
                    top,
                    waiting,
                    interruptMillis,
                    interrupted.get(),
                    freeAfter,
                    freeMillis,
                    error);
        }
    }

    /** The process's CPU time over {@code window}, as a percentage of one core. */
    private static double cpuPercent(OperatingSystemMXBean os, Duration window) throws InterruptedException {
        long cpu0 = os.getProcessCpuTime();
        long t0 = System.nanoTime();
        Thread.sleep(window.toMillis());
        long cpu = os.getProcessCpuTime() - cpu0;
        return 100.0 * cpu / (System.nanoTime() - t0);
    }

    /** CPU time per platform thread name, digits dropped (locksmith-helper-3 and -4 add up). */
    private static Map<String, Long> threadCpu(ThreadMXBean threads) {
        Map<String, Long> cpu = new HashMap<>();
        for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (info == null) {
                continue;
            }
            long t = threads.getThreadCpuTime(info.getThreadId());
            if (t > 0) {
                cpu.merge(info.getThreadName().replaceAll("[0-9]+", "N"), t, Long::sum);
            }
        }
        return cpu;
    }

    private static String topThreads(Map<String, Long> before, Map<String, Long> after, Duration window) {
        return after.entrySet().stream()
                .map(e -> Map.entry(e.getKey(), e.getValue() - before.getOrDefault(e.getKey(), 0L)))
                .filter(e -> e.getValue() > 0)
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .limit(3)
                .map(e -> String.format(Locale.ROOT, "%s %.1f %%", e.getKey(), 100.0 * e.getValue() / window.toNanos()))
                .collect(Collectors.joining(", "));
    }

    static String markdown(Settings s, List<Outcome> outcomes, String date, String loadBefore, String loadAfter) {
        StringBuilder md = new StringBuilder();
        md.append(String.format(
                Locale.ROOT,
                "%,d virtual threads wait in `acquire` for one key another client of the same backend holds (started"
                        + " over %d s); process CPU over %d s once they queued (%d s after the last started), against"
                        + " %d s with the"
                        + " holder alone. Run on %s, %d cores, JVM %s; load average %s at the start, %s at the end."
                        + "\n\n",
                s.threads(),
                s.ramp().toSeconds(),
                s.window().toSeconds(),
                s.settle().toSeconds(),
                s.window().toSeconds(),
                date,
                Runtime.getRuntime().availableProcessors(),
                Runtime.version(),
                loadBefore,
                loadAfter));
        md.append("| backend | CPU, holder alone | CPU, waiters queued | busiest platform threads while waiting |"
                + " all interrupted within | another client gets the key after the release |\n");
        md.append("|---|---|---|---|---|---|\n");
        for (Outcome o : outcomes) {
            md.append(String.format(
                    Locale.ROOT,
                    "| %s | %.2f %% | %.2f %% | %s | %.0f ms | %s |\n",
                    o.backend().title,
                    o.baselineCpuPercent(),
                    o.waitingCpuPercent(),
                    o.topThreads().isEmpty() ? "—" : o.topThreads(),
                    o.interruptMillis(),
                    o.freeAfter() ? String.format(Locale.ROOT, "%.0f ms", o.freeMillis()) : "**not in 10 s**"));
        }
        for (Outcome o : outcomes) {
            if (o.error() != null) {
                md.append("\n- ").append(o.backend().title).append(": ").append(o.error());
            }
        }
        md.append('\n');
        return md.toString();
    }

    private static void log(String line) {
        System.out.println("[idle] " + line);
    }
}
