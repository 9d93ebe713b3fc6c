package org.locksmith.lock.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import org.locksmith.lock.DistributedLock;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockTimeoutException;
import org.locksmith.lock.Locks;
import redis.clients.jedis.Jedis;

/**
 * Issue 19's scale scenario: many virtual threads (10,000 by default) contend for few keys (100) through one {@link
 * LockClient} per backend, opened from a URL with a bounded number of store connections. Each virtual thread acquires
 * its key ({@code threadIndex % keys}) with a generous timeout, holds it for {@code --holdMs} and releases it.
 *
 * <pre>
 * VirtualThreadsAtScale [--threads=10000] [--keys=100] [--holdMs=1] [--limitS=60] [--pool=32]
 *                       [--backends=redis,mysql,postgres,zookeeper] [--out=target/bench/vthreads.md]
 * </pre>
 *
 * <p>Per backend it reports grants per second, the acquire wait (p50, p99, max), the store connections the client
 * used as the store counts them (Redis {@code CLIENT LIST} by client name, MariaDB/MySQL {@code
 * information_schema.PROCESSLIST} rows from this process's sockets, PostgreSQL {@code pg_stat_activity} by {@code
 * application_name}, ZooKeeper {@code srvr}'s connection count on the run's own server), the peak platform thread
 * count ({@link ThreadMXBean}, which counts platform threads only) and the {@code jdk.VirtualThreadPinned} events of a
 * flight recording with no threshold, with the top frames of each distinct pinned stack. A plain counter per key,
 * incremented inside the lock, must equal the grants (mutual exclusion). Each backend is bounded by {@code --limitS}:
 * a virtual thread still running at the limit is interrupted and the backend is reported incomplete, with why.
 *
 * <p>The module builds for Java 17, which has no virtual threads: the executor is looked up by reflection, and on a
 * JDK without it the run fails at once with a message naming the JDK to use. It is not part of the default build; run
 * it with {@code ./mvnw -B -Pvthreads -DskipTests -pl lock-bench verify
 * -Dvthreads.java=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}.
 */
public final class VirtualThreadsAtScale {
    private static final String PINNED = "jdk.VirtualThreadPinned";
    private static final int TOP_FRAMES = 8;

    private VirtualThreadsAtScale() {}

    /** The stores this scenario runs on. */
    enum Backend {
        REDIS("Redis", "locksmith-redis"),
        MYSQL("MariaDB/MySQL (row)", "locksmith-mysql-row"),
        POSTGRES("PostgreSQL", "locksmith-postgres"),
        ZOOKEEPER("ZooKeeper", "locksmith-zookeeper");

        final String title;
        final String contender;

        Backend(String title, String contender) {
            this.title = title;
            this.contender = contender;
        }

        /** The URL of the one client, with {@code pool} connections where the backend has a pool. */
        String url(Stores stores, int pool) {
            String id = stores.runId();
            return switch (this) {
                case REDIS ->
                    stores.redisUrl() + (stores.redisUrl().contains("?") ? '&' : '?') + "prefix=lsbench:" + id
                            + ":vt:&clientName=" + clientName(stores) + "&poolSize=" + pool + "&waitPoolSize=" + pool;
                case MYSQL ->
                    stores.mysqlUrl() + (stores.mysqlUrl().contains("?") ? '&' : '?') + "table=lsbench_" + id
                            + "_vt&strategy=row&poolSize=" + pool;
                case POSTGRES ->
                    stores.postgresUrl() + (stores.postgresUrl().contains("?") ? '&' : '?') + "table=lsbench_" + id
                            + "_vt&poolSize=" + pool + "&applicationName=" + clientName(stores);
                case ZOOKEEPER -> "zookeeper://" + stores.zookeeperConnect() + "/lsbench-" + id + "-vt";
            };
        }

        /** What the URL bounds, for the report. */
        String bound(int pool) {
            return switch (this) {
                case REDIS -> "poolSize=" + pool + ", waitPoolSize=" + pool;
                case MYSQL, POSTGRES -> "poolSize=" + pool;
                case ZOOKEEPER -> "one session";
            };
        }

        static String clientName(Stores stores) {
            return "lsbench_vt_" + stores.runId();
        }
    }

    /** The settings of one run. */
    record Settings(int threads, int keys, Duration hold, Duration limit, int pool, Set<Backend> backends, Path out) {
        static Settings parse(String[] args) {
            int threads = 10_000;
            int keys = 100;
            Duration hold = Duration.ofMillis(1);
            Duration limit = Duration.ofSeconds(60);
            int pool = 32;
            Set<Backend> backends = EnumSet.allOf(Backend.class);
            Path out = Path.of("target/bench/vthreads.md");
            // -Dvthreads.args reaches main as one argument: "--out=F --backends=redis" counts as two.
            for (String arg : String.join(" ", args).trim().split("\\s+")) {
                if (arg.isEmpty()) {
                    continue;
                }
                String value = arg.substring(arg.indexOf('=') + 1);
                if (arg.startsWith("--threads=")) {
                    threads = Integer.parseInt(value);
                } else if (arg.startsWith("--keys=")) {
                    keys = Integer.parseInt(value);
                } else if (arg.startsWith("--holdMs=")) {
                    hold = Duration.ofMillis(Long.parseLong(value));
                } else if (arg.startsWith("--limitS=")) {
                    limit = Duration.ofSeconds(Long.parseLong(value));
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
                    throw new IllegalArgumentException("Unknown argument " + arg + "; use --threads=N --keys=N"
                            + " --holdMs=N --limitS=N --pool=N --backends=redis,mysql,postgres,zookeeper --out=FILE");
                }
            }
            if (threads < 1 || keys < 1 || keys > threads || pool < 1 || limit.toSeconds() < 1) {
                throw new IllegalArgumentException("need threads >= keys >= 1, pool >= 1, limitS >= 1");
            }
            return new Settings(threads, keys, hold, limit, pool, backends, out);
        }
    }

    /** What one backend did. */
    record Outcome(
            Backend backend,
            String bound,
            int threads,
            long grants,
            long timeouts,
            Map<String, Integer> failures,
            int unfinished,
            boolean exclusive,
            double seconds,
            Histogram waits,
            int connectionsPeak,
            int platformBefore,
            int platformPeak,
            int platformLiveAtEnd,
            int pinned,
            Map<String, Integer> pinnedStacks,
            Map<PinSource, Integer> pinnedBy,
            String error) {

        boolean complete() {
            return error == null
                    && grants == threads
                    && timeouts == 0
                    && failures.isEmpty()
                    && unfinished == 0
                    && exclusive;
        }

        double grantsPerSecond() {
            return grants / seconds;
        }

        double waitMillis(double percentile) {
            return waits.getTotalCount() == 0 ? Double.NaN : waits.getValueAtPercentile(percentile) / 1e6;
        }

        /** Why the backend did not complete, or null. */
        String why() {
            List<String> why = new ArrayList<>();
            if (error != null) {
                why.add(error);
            }
            if (timeouts > 0) {
                why.add(timeouts + " acquires timed out (LockTimeoutException)");
            }
            failures.forEach((what, n) -> why.add(n + "× " + what));
            if (unfinished > 0) {
                why.add(unfinished + " virtual threads still running at the limit (interrupted)");
            }
            if (!exclusive) {
                why.add("the per-key counters disagree with the grants: mutual exclusion broken");
            }
            if (why.isEmpty() && grants != threads) {
                why.add((threads - grants) + " threads got no grant");
            }
            return why.isEmpty() ? null : String.join("; ", why);
        }
    }

    /**
     * Runs the scenario for the backends asked for, prints the Markdown report and writes it to {@code --out}; exits
     * with status 1 when a backend did not complete, 2 on a JDK without virtual threads or bad arguments.
     */
    public static void main(String[] args) throws Exception {
        Settings settings;
        try {
            settings = Settings.parse(args);
            newVirtualThreadPerTaskExecutor().shutdown(); // fail before any store is touched
        } catch (IllegalArgumentException | UnsupportedOperationException e) {
            System.err.println("[vthreads] " + e.getMessage());
            System.exit(2);
            return;
        }
        String loadBefore = Environment.load();
        String started = ZonedDateTime.now(ZoneOffset.UTC)
                .format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'", Locale.ROOT));
        List<Outcome> outcomes = new ArrayList<>();
        List<String> servers;
        try (Stores stores = Stores.start()) {
            log("stores: " + stores + "; run " + stores.runId());
            servers = stores.serverVersions();
            try {
                for (Backend backend : settings.backends()) {
                    Outcome o = run(backend, stores, settings);
                    outcomes.add(o);
                    log(String.format(
                            Locale.ROOT,
                            "%s: %d grants in %.1f s = %.0f grants/s, wait p50 %.1f ms p99 %.1f ms max %.1f ms,"
                                    + " %d store connections, platform threads peak %d, %d pinned%s",
                            backend.title,
                            o.grants(),
                            o.seconds(),
                            o.grantsPerSecond(),
                            o.waitMillis(50),
                            o.waitMillis(99),
                            o.waitMillis(100),
                            o.connectionsPeak(),
                            o.platformPeak(),
                            o.pinned(),
                            o.complete() ? "" : "; INCOMPLETE: " + o.why()));
                }
            } finally {
                stores.removeRunState();
            }
        }
        String md = markdown(settings, outcomes, servers, started, loadBefore, Environment.load());
        System.out.println(md);
        Files.createDirectories(settings.out().toAbsolutePath().getParent());
        Files.writeString(settings.out(), md, StandardCharsets.UTF_8);
        log("wrote " + settings.out());
        if (!outcomes.stream().allMatch(Outcome::complete)) {
            System.exit(1);
        }
    }

    /**
     * {@code Executors.newVirtualThreadPerTaskExecutor()}, looked up by reflection because this module builds for
     * Java 17.
     *
     * @throws UnsupportedOperationException on a JDK without virtual threads (before 21, or 19/20 without preview)
     */
    static ExecutorService newVirtualThreadPerTaskExecutor() {
        try {
            return (ExecutorService)
                    Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        } catch (NoSuchMethodException | IllegalAccessException | InvocationTargetException e) {
            throw new UnsupportedOperationException(
                    "This scenario needs virtual threads (Java 21 or newer), but runs on Java " + Runtime.version()
                            + " (" + System.getProperty("java.home") + "): Executors.newVirtualThreadPerTaskExecutor"
                            + " is " + (e instanceof NoSuchMethodException ? "missing" : "unusable (" + e + ")")
                            + ". Run it with -Dvthreads.java=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java, or any JDK"
                            + " 21+.",
                    e);
        }
    }

    static Outcome run(Backend backend, Stores stores, Settings s) throws Exception {
        String url = backend.url(stores, s.pool());
        log(backend.title + ": " + s.threads() + " virtual threads on " + s.keys() + " keys, " + url);
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        ConnectionCounter counter = new ConnectionCounter(backend, stores);
        int baseline = counter.count();
        int platformBefore = threads.getThreadCount();
        threads.resetPeakThreadCount();
        Path jfr = Files.createTempFile("locksmith-vthreads-" + backend.name().toLowerCase(Locale.ROOT), ".jfr");
        ConcurrentHistogram waits = new ConcurrentHistogram(3);
        AtomicLong grants = new AtomicLong();
        AtomicLong timeouts = new AtomicLong();
        Map<String, Integer> failures = new ConcurrentHashMap<>();
        int[] perKey = new int[s.keys()]; // plain ints, written only by a holder of the key's lock
        AtomicInteger connectionsPeak = new AtomicInteger();
        int unfinished = 0;
        String error = null;
        double seconds = 0;
        int platformLiveAtEnd;
        try (Recording recording = new Recording()) {
            recording.enable(PINNED).withThreshold(Duration.ZERO).withStackTrace();
            recording.start();
            Thread sampler = new Thread(
                    () -> {
                        while (!Thread.currentThread().isInterrupted()) {
                            try {
                                connectionsPeak.accumulateAndGet(counter.count() - baseline, Math::max);
                                TimeUnit.MILLISECONDS.sleep(200);
                            } catch (InterruptedException e) {
                                return;
                            } catch (Exception e) {
                                log(backend.title + ": could not count store connections: " + e);
                            }
                        }
                    },
                    "vthreads-connection-sampler");
            sampler.setDaemon(true);
            long deadline = System.nanoTime() + s.limit().toNanos();
            try (LockClient client = Locks.open(url)) {
                DistributedLock[] locks = new DistributedLock[s.keys()];
                for (int k = 0; k < locks.length; k++) {
                    locks[k] = client.lock("k" + k);
                }
                sampler.start();
                // generous, but ending before the backend's limit so that a timeout is reported as one
                Duration timeout = s.limit().minusSeconds(5).isNegative()
                        ? s.limit()
                        : s.limit().minusSeconds(5);
                long start = System.nanoTime();
                ExecutorService executor = newVirtualThreadPerTaskExecutor();
                for (int i = 0; i < s.threads(); i++) {
                    int k = i % s.keys();
                    executor.execute(() -> {
                        long t0 = System.nanoTime();
                        try (LockLease lease = locks[k].acquire(timeout)) {
                            waits.recordValue(System.nanoTime() - t0);
                            perKey[k]++;
                            if (!s.hold().isZero()) {
                                Thread.sleep(s.hold().toMillis());
                            }
                            grants.incrementAndGet();
                        } catch (LockTimeoutException e) {
                            timeouts.incrementAndGet();
                        } catch (InterruptedException e) {
                            failures.merge("interrupted at the limit", 1, Integer::sum);
                        } catch (Exception | Error e) {
                            failures.merge(describe(e), 1, Integer::sum);
                        }
                    });
                }
                executor.shutdown();
                long left = deadline - System.nanoTime();
                if (!executor.awaitTermination(Math.max(left, 0), TimeUnit.NANOSECONDS)) {
                    executor.shutdownNow();
                    executor.awaitTermination(10, TimeUnit.SECONDS);
                    unfinished = s.threads()
                            - (int) (grants.get()
                                    + timeouts.get()
                                    + failures.values().stream()
                                            .mapToInt(Integer::intValue)
                                            .sum());
                    unfinished = Math.max(unfinished, 0);
                    error = "did not finish within " + s.limit().toSeconds() + " s";
                }
                seconds = (System.nanoTime() - start) / 1e9;
                sampler.interrupt();
                sampler.join(5_000);
                connectionsPeak.accumulateAndGet(counter.count() - baseline, Math::max);
                platformLiveAtEnd = threads.getThreadCount();
            } catch (RuntimeException e) {
                sampler.interrupt();
                error = "could not run: " + describe(e);
                platformLiveAtEnd = threads.getThreadCount();
            }
            recording.stop();
            recording.dump(jfr);
        } finally {
            counter.close();
        }
        int platformPeak = threads.getPeakThreadCount();
        int pinned = 0;
        Map<String, Integer> stacks = new LinkedHashMap<>();
        Map<PinSource, Integer> by = new java.util.EnumMap<>(PinSource.class);
        try {
            for (RecordedEvent event : RecordingFile.readAllEvents(jfr)) {
                if (event.getEventType().getName().equals(PINNED)) {
                    pinned++;
                    stacks.merge(topFrames(event), 1, Integer::sum);
                    by.merge(PinSource.of(event), 1, Integer::sum);
                }
            }
        } finally {
            Files.deleteIfExists(jfr);
        }
        long counted = 0;
        for (int n : perKey) {
            counted += n;
        }
        return new Outcome(
                backend,
                backend.bound(s.pool()),
                s.threads(),
                grants.get(),
                timeouts.get(),
                new LinkedHashMap<>(failures),
                unfinished,
                counted == grants.get(),
                seconds,
                waits,
                connectionsPeak.get(),
                platformBefore,
                platformPeak,
                platformLiveAtEnd,
                pinned,
                stacks,
                by,
                error);
    }

    /** Whose code held the monitor a pinned virtual thread parked in: the first frame outside the JDK decides. */
    enum PinSource {
        POOL("pool"),
        DRIVER("driver I/O"),
        CORE("Locksmith"),
        FIRST_USE("first use"),
        JDK("JDK only");

        final String title;

        PinSource(String title) {
            this.title = title;
        }

        static PinSource of(RecordedEvent event) {
            if (event.hasField("pinnedReason")
                    && (String.valueOf(event.getString("pinnedReason")).contains("initialization")
                            || String.valueOf(event.getString("pinnedReason")).contains("<clinit>"))) {
                return FIRST_USE; // JDK 24+: a class initializer running, or awaited on another thread
            }
            if (event.getStackTrace() == null) {
                return JDK;
            }
            for (RecordedFrame f : event.getStackTrace().getFrames()) {
                String type = f.getMethod().getType().getName();
                if (type.equals("java.lang.ClassLoader")
                        || type.startsWith("jdk.internal.loader.")
                        || type.equals("java.lang.invoke.MethodHandleNatives")) {
                    return FIRST_USE; // class loading or call-site linking, once per class or call site
                }
            }
            for (RecordedFrame f : event.getStackTrace().getFrames()) {
                String type = f.getMethod().getType().getName();
                if (type.startsWith("java.") || type.startsWith("jdk.") || type.startsWith("sun.")) {
                    continue;
                }
                if (type.startsWith("org.apache.commons.pool2.")
                        || type.startsWith("com.zaxxer.hikari.")
                        || type.endsWith("ConnectionPool")) {
                    return POOL;
                }
                return type.startsWith("org.locksmith.") ? CORE : DRIVER;
            }
            return JDK;
        }
    }

    private static String pinnedBy(Outcome o) {
        if (o.pinned() == 0) {
            return "0";
        }
        return o.pinned() + " ("
                + o.pinnedBy().entrySet().stream()
                        .map(e -> e.getKey().title + " " + e.getValue())
                        .collect(Collectors.joining(", "))
                + ")";
    }

    /**
     * The pinned event's reason (JDK 24+ records one), its top frames and the first frames of code outside the JDK,
     * which name the library whose call pinned the carrier.
     */
    private static String topFrames(RecordedEvent event) {
        StringBuilder what = new StringBuilder();
        if (event.hasField("pinnedReason")) {
            what.append("reason: ").append(event.getString("pinnedReason")).append('\n');
        }
        if (event.getStackTrace() == null) {
            return what.append("(no stack trace)").toString();
        }
        List<RecordedFrame> frames = event.getStackTrace().getFrames();
        what.append(frames.stream()
                .limit(TOP_FRAMES)
                .map(VirtualThreadsAtScale::frame)
                .collect(Collectors.joining("\n")));
        List<String> outside = frames.stream()
                .skip(TOP_FRAMES)
                .map(VirtualThreadsAtScale::frame)
                .filter(f -> !f.startsWith("java.") && !f.startsWith("jdk.") && !f.startsWith("sun."))
                .limit(4)
                .toList();
        if (!outside.isEmpty()
                && frames.stream()
                        .limit(TOP_FRAMES)
                        .map(VirtualThreadsAtScale::frame)
                        .allMatch(f -> f.startsWith("java.") || f.startsWith("jdk.") || f.startsWith("sun."))) {
            what.append("\n... first frames outside the JDK:\n").append(String.join("\n", outside));
        }
        return what.toString();
    }

    private static String frame(RecordedFrame f) {
        return f.getMethod().getType().getName() + "." + f.getMethod().getName()
                + (f.getLineNumber() > 0 ? ":" + f.getLineNumber() : "");
    }

    private static String describe(Throwable e) {
        String what = e.getClass().getSimpleName() + ": " + e.getMessage();
        if (e.getCause() != null && e.getCause() != e) {
            what += " (cause " + e.getCause().getClass().getSimpleName() + ": "
                    + e.getCause().getMessage() + ")";
        }
        return what.length() > 300 ? what.substring(0, 300) + "…" : what;
    }

    /** Counts the connections of this run's client as the store sees them, on a connection of its own. */
    private static final class ConnectionCounter implements AutoCloseable {
        private final Backend backend;
        private final Stores stores;
        private Jedis jedis;
        private Connection jdbc;

        ConnectionCounter(Backend backend, Stores stores) throws SQLException {
            this.backend = backend;
            this.stores = stores;
            switch (backend) {
                case REDIS -> jedis = stores.redis();
                case MYSQL -> jdbc = stores.mysqlConnection();
                case POSTGRES -> jdbc = stores.postgresConnection();
                case ZOOKEEPER -> {}
            }
        }

        /**
         * Redis: {@code CLIENT LIST} lines with the client's name. MariaDB/MySQL: {@code PROCESSLIST} rows whose
         * client port is one of this process's sockets to the server (other builds may share the server and user),
         * this counter's own excepted. PostgreSQL: {@code pg_stat_activity} rows of the client's {@code
         * application_name}. ZooKeeper: {@code srvr}'s connection count of the run's own server, which includes the
         * probe itself (the caller subtracts the count before the client opened).
         */
        synchronized int count() throws SQLException, IOException {
            switch (backend) {
                case REDIS -> {
                    String name = " name=" + Backend.clientName(stores) + " ";
                    return (int) jedis.clientList()
                            .lines()
                            .filter(l -> l.contains(name))
                            .count();
                }
                case MYSQL -> {
                    Set<Integer> ports = localPortsTo(
                            java.net.URI.create(stores.mysqlUrl()).getPort() < 0
                                    ? 3306
                                    : java.net.URI.create(stores.mysqlUrl()).getPort());
                    int n = 0;
                    try (Statement st = jdbc.createStatement();
                            ResultSet rs = st.executeQuery("SELECT HOST FROM information_schema.PROCESSLIST"
                                    + " WHERE ID <> CONNECTION_ID()")) {
                        while (rs.next()) {
                            String host = rs.getString(1);
                            int colon = host == null ? -1 : host.lastIndexOf(':');
                            if (colon > 0 && ports.contains(Integer.parseInt(host.substring(colon + 1)))) {
                                n++;
                            }
                        }
                    }
                    return n;
                }
                case POSTGRES -> {
                    try (PreparedStatement ps =
                            jdbc.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE application_name = ?")) {
                        ps.setString(1, Backend.clientName(stores));
                        try (ResultSet rs = ps.executeQuery()) {
                            rs.next();
                            return rs.getInt(1);
                        }
                    }
                }
                case ZOOKEEPER -> {
                    return stores.fourLetterWord("srvr")
                            .lines()
                            .filter(l -> l.startsWith("Connections:"))
                            .mapToInt(l -> Integer.parseInt(
                                    l.substring("Connections:".length()).trim()))
                            .findFirst()
                            .orElse(-1);
                }
            }
            throw new AssertionError(backend);
        }

        /** The local ports of this process's TCP sockets whose remote port is {@code remotePort} (Linux /proc). */
        private static Set<Integer> localPortsTo(int remotePort) throws IOException {
            Set<String> inodes = new HashSet<>();
            try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
                for (Path fd : fds) {
                    try {
                        String target = Files.readSymbolicLink(fd).toString();
                        if (target.startsWith("socket:[")) {
                            inodes.add(target.substring(8, target.length() - 1));
                        }
                    } catch (IOException closedMeanwhile) {
                        // the descriptor was closed while listed
                    }
                }
            }
            Set<Integer> ports = new HashSet<>();
            for (String table : List.of("/proc/self/net/tcp", "/proc/self/net/tcp6")) {
                Path path = Path.of(table);
                if (!Files.exists(path)) {
                    continue;
                }
                List<String> lines = Files.readAllLines(path);
                for (String line : lines.subList(1, lines.size())) {
                    String[] f = line.trim().split("\\s+");
                    String local = f[1];
                    String remote = f[2];
                    int rport = Integer.parseInt(remote.substring(remote.indexOf(':') + 1), 16);
                    if (rport == remotePort && inodes.contains(f[9])) {
                        ports.add(Integer.parseInt(local.substring(local.indexOf(':') + 1), 16));
                    }
                }
            }
            return ports;
        }

        @Override
        public void close() {
            if (jedis != null) {
                jedis.close();
            }
            if (jdbc != null) {
                try {
                    jdbc.close();
                } catch (SQLException ignored) {
                    // a counter's connection: nothing was written
                }
            }
        }
    }

    static String markdown(
            Settings s,
            List<Outcome> outcomes,
            List<String> servers,
            String date,
            String loadBefore,
            String loadAfter) {
        StringBuilder md = new StringBuilder();
        md.append("## ").append(String.format(Locale.ROOT, "%,d", s.threads())).append(" virtual threads\n\n");
        md.append(String.format(
                Locale.ROOT,
                "%,d virtual threads contend for %d keys (thread i takes key i mod %d) through one `LockClient` per"
                        + " backend, opened from a URL; each does one `acquire(key, %d s)`, holds the lock %d ms and"
                        + " releases it. Run on %s, %s; JVM %s %s (%s); load average %s at the start, %s at the end;"
                        + " each backend limited to %d s.\n\n",
                s.threads(),
                s.keys(),
                s.keys(),
                s.limit().minusSeconds(5).isNegative()
                        ? s.limit().toSeconds()
                        : s.limit().minusSeconds(5).toSeconds(),
                s.hold().toMillis(),
                date,
                Runtime.getRuntime().availableProcessors() + " cores",
                System.getProperty("java.vm.vendor"),
                System.getProperty("java.vm.name"),
                Runtime.version(),
                loadBefore,
                loadAfter,
                s.limit().toSeconds()));
        md.append("```\n./mvnw -B -Pvthreads -DskipTests -pl lock-bench -am verify -Dvthreads.java=<the java of the JVM"
                + " above>\n```\n\n");
        md.append("Servers: ").append(String.join("; ", servers)).append(".\n\n");
        md.append("| backend | connections bound | grants | grants/s | wait p50 ms | wait p99 ms | wait max ms"
                + " | store connections used (peak) | platform threads before / peak / at end | pinned events (by source) |"
                + " complete |\n");
        md.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Outcome o : outcomes) {
            md.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %d | %.0f | %.1f | %.1f | %.1f | %d | %d / %d / %d | %s | %s |\n",
                    o.backend().title,
                    o.bound(),
                    o.grants(),
                    o.grantsPerSecond(),
                    o.waitMillis(50),
                    o.waitMillis(99),
                    o.waitMillis(100),
                    o.connectionsPeak(),
                    o.platformBefore(),
                    o.platformPeak(),
                    o.platformLiveAtEnd(),
                    pinnedBy(o),
                    o.complete() ? "yes" : "**no**"));
        }
        md.append("\nStore connections are counted by the store every 200 ms: Redis `CLIENT LIST` by the client's"
                + " name, MariaDB `information_schema.PROCESSLIST` rows from this process's sockets, PostgreSQL"
                + " `pg_stat_activity` by `application_name`, ZooKeeper `srvr`'s connection count on the run's own"
                + " server (minus the probe). Platform threads are `ThreadMXBean` counts (virtual threads are not"
                + " counted; the JVM's own threads and the sampler are). Pinned events are `jdk.VirtualThreadPinned`"
                + " with no threshold, recorded during the backend's run, each counted by the first frame outside the JDK:"
                + " a connection pool (commons-pool2, HikariCP, a `*ConnectionPool`), Locksmith, or any other library"
                + " (the store's driver, Curator); \"first use\" is class loading, a wait for another thread's class"
                + " initialization or call-site linking, which happen once.\n");
        for (Outcome o : outcomes) {
            if (!o.complete()) {
                md.append("\n- ")
                        .append(o.backend().title)
                        .append(" did not complete: ")
                        .append(o.why());
            }
        }
        for (Outcome o : outcomes) {
            if (!o.pinnedStacks().isEmpty()) {
                md.append("\n\n")
                        .append(o.backend().title)
                        .append(": ")
                        .append(o.pinned())
                        .append(" pinned events; top frames of each distinct stack:\n");
                o.pinnedStacks().entrySet().stream()
                        .sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
                        .limit(5)
                        .forEach(e -> md.append("\n```\n")
                                .append(e.getValue())
                                .append("×\n")
                                .append(e.getKey())
                                .append("\n```\n"));
                if (o.pinnedStacks().size() > 5) {
                    md.append("\n(and ").append(o.pinnedStacks().size() - 5).append(" more distinct stacks)\n");
                }
            }
        }
        md.append('\n');
        return md.toString();
    }

    private static void log(String line) {
        System.out.println("[vthreads] " + line);
    }
}
