package org.locksmith.lock.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.Locks;
import org.locksmith.lock.cli.internal.Durations;
import org.locksmith.lock.cli.internal.EmbeddedZooKeeper;
import org.locksmith.lock.cli.internal.LockUrls;
import org.locksmith.lock.cli.internal.TckRun;
import org.locksmith.lock.cli.internal.TckTarget;
import org.locksmith.lock.cli.internal.TempDirs;
import org.locksmith.lock.spi.LockUrl;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code locksmith demo}: worker processes contending on an in-process ZooKeeper, one of them killed while holding
 * a lock, then the TCK's semantics table of every backend within reach. Needs no server and no setting, and ends by
 * itself.
 */
@Command(
        name = "demo",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "A self-contained tour, no server or setting needed: starts an in-process ZooKeeper server and a few"
                    + " worker processes that contend for a few keys, shows live who holds which key with its"
                    + " fencing token and how long each waited, kills one holder midway (SIGKILL) and shows the"
                    + " lock pass on once its session expires.",
            "Then runs a quick selection of the TCK against every backend it can reach (the in-process ZooKeeper"
                    + " always; Redis, MySQL and PostgreSQL at their default local ports, or the URLs given) and prints the"
                    + " semantics table side by side. Ends by itself (about a minute); Ctrl-C stops everything."
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  locksmith demo",
            "  locksmith demo --workers 6 --duration 30s",
            "  locksmith demo --redis-url redis://cache:6379 --mysql-url 'mysql://app:secret@db:3306/app'",
            "  locksmith demo --no-table",
            "",
            "Exit status: 0 when the demo ran; 1 if a contract failed on a backend; 64 usage error."
        })
final class DemoCommand implements Callable<Integer> {

    /** The demo's quick selection: one or two tests per contract that needs no fault hook. */
    static final Pattern QUICK_SELECTION = Pattern.compile("c01_mutualExclusion_severalClients"
            + "|c02_progress_(freeKeyGrantedInOneAttempt|handoffLatency)"
            + "|c03_reentrancy_.*"
            + "|c04_ownership_otherClientCannotRelease"
            + "|c05_deadlines_(timedAcquireGivesUpOnTime|tryAcquireDoesNotWait)"
            + "|c06_interruption_interruptedWaiterLeavesNothing"
            + "|c07_leaseExpiry_(abandonedLeaseExpires|killedWorkerProcessFreesAfterLease)"
            + "|c08_renewal_liveHolderKeepsLockPastLease"
            + "|c09_session_killedWorkerProcessFreesPromptly"
            + "|c10_fencing_(tokensRiseAcrossClients|undeclaredFencingTokenThrows)"
            + "|c12_fairness_arrivalOrder"
            + "|c13_close_releasesLeases"
            + "|c14_keys_(invalidKeysRejectedBeforeIo|distinctKeysNeverCollide)");

    private static final Duration SESSION = Duration.ofSeconds(2);
    private static final List<String> KEYS = List.of("invoices", "reports", "backup");

    @Option(
            names = "--workers",
            defaultValue = "4",
            paramLabel = "N",
            description = "Worker processes (2 to 16). Default: ${DEFAULT-VALUE}.")
    int workers;

    @Option(
            names = "--duration",
            defaultValue = "20s",
            paramLabel = "DURATION",
            converter = Durations.class,
            description = "How long the workers contend (5s to 10m). Default: ${DEFAULT-VALUE}.")
    Duration duration;

    @Option(
            names = "--redis-url",
            defaultValue = "redis://127.0.0.1:6379",
            paramLabel = "URL",
            description = "Redis for the table, if reachable. Default: ${DEFAULT-VALUE}.")
    String redisUrl;

    @Option(
            names = "--mysql-url",
            defaultValue = "mysql://root@127.0.0.1:3306/test",
            paramLabel = "URL",
            description = "MySQL or MariaDB for the table, if reachable. Default: ${DEFAULT-VALUE}.")
    String mysqlUrl;

    @Option(
            names = "--postgres-url",
            defaultValue = "postgresql://postgres@127.0.0.1:5432/postgres",
            paramLabel = "URL",
            description = "PostgreSQL for the table, if reachable. Default: ${DEFAULT-VALUE}.")
    String postgresUrl;

    @Option(names = "--no-table", description = "Only the contention part; no TCK table.")
    boolean noTable;

    @Option(
            names = "--time-factor",
            paramLabel = "F",
            description = "Stretch the TCK's time allowances (hand-off, deadline overshoot, interrupt latency) by F,"
                    + " 1 to 100, for a busy or slow machine. Default: LOCKSMITH_TCK_TIME_FACTOR, else 1.")
    Double timeFactor;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    private PrintWriter out;
    private final List<Worker> started = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        out = spec.commandLine().getOut();
        if (workers < 2 || workers > 16) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--workers must be from 2 to 16");
        }
        if (duration.compareTo(Duration.ofSeconds(5)) < 0 || duration.compareTo(Duration.ofMinutes(10)) > 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--duration must be from 5s to 10m");
        }
        TimeFactor.apply(timeFactor);
        long t0 = System.nanoTime();
        int status;
        try (EmbeddedZooKeeper zk = new EmbeddedZooKeeper()) {
            // Ctrl-C: stop the workers and the server (and its data directory) on the way out too.
            Runtime.getRuntime()
                    .addShutdownHook(new Thread(
                            () -> {
                                stopWorkers();
                                zk.close();
                            },
                            "locksmith-demo-cleanup"));
            String zkUrl = "zookeeper://" + zk.connectString() + "/locksmith-demo?sessionTimeoutMs="
                    + SESSION.toMillis() + "&connectionTimeoutMs=3000";
            contend(zkUrl);
            status = noTable ? ExitStatus.OK : table(zkUrl);
        } finally {
            stopWorkers();
        }
        out.printf(
                Locale.ROOT,
                "%nDemo finished in %.1f s; everything it started is stopped.%n",
                (System.nanoTime() - t0) / 1e9);
        out.flush();
        return status;
    }

    // ---- part 1: contention --------------------------------------------------------------------------------

    /** One worker JVM and what the demo knows of it. */
    private static final class Worker {
        final String name;
        final Process process;
        volatile boolean killed;
        int grants;
        long waitedTotal;
        long waitedMax;

        Worker(String name, Process process) {
            this.name = name;
            this.process = process;
        }
    }

    private record Event(Worker worker, String line) {}

    private record Holding(Worker worker, long token, long since) {}

    private void contend(String zkUrl) throws Exception {
        out.println("== Part 1: " + workers + " worker processes contend for " + KEYS.size()
                + " locks on an in-process ZooKeeper (" + zkUrl.substring(12, zkUrl.indexOf('/', 12)) + ", session "
                + "timeout " + Durations.format(SESSION) + ") for " + Durations.format(duration));
        out.println("   Each worker loops: pick a key, wait for its lock, hold it 0.4-1.3 s, release.");
        out.println("   The fencing token is ZooKeeper's czxid of the lock node: it only ever rises per key.");
        out.println();
        out.flush();
        BlockingQueue<Event> events = new LinkedBlockingQueue<>();
        long demoEnd = System.nanoTime() + duration.toNanos();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        for (int i = 1; i <= workers; i++) {
            List<String> cmd = List.of(
                    java,
                    "-Xmx64m",
                    "-XX:TieredStopAtLevel=1",
                    "-XX:+UseSerialGC",
                    "-Xshare:auto",
                    "-Dorg.slf4j.simpleLogger.defaultLogLevel=off",
                    "-cp",
                    classPath(),
                    DemoWorker.class.getName(),
                    zkUrl,
                    Long.toString(Math.max(1000, (demoEnd - System.nanoTime()) / 1_000_000)),
                    String.join(",", KEYS));
            Process p = new ProcessBuilder(cmd)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            Worker w = new Worker("worker-" + i, p);
            started.add(w);
            Thread reader = new Thread(() -> pump(w, events), "locksmith-demo-" + w.name);
            reader.setDaemon(true);
            reader.start();
        }
        long start = System.nanoTime();
        Map<String, Holding> holders = new LinkedHashMap<>();
        KEYS.forEach(k -> holders.put(k, null));
        long hardEnd = demoEnd + Duration.ofSeconds(30).toNanos();
        long killAt = start + duration.toNanos() / 2;
        long nextSnapshot = start + Duration.ofSeconds(4).toNanos();
        Holding victim = null;
        String victimKey = null;
        int running = workers;
        Thread watcher = null;
        out.println("  time  worker     event");
        while ((running > 0 || watcher != null && watcher.isAlive() || !events.isEmpty())
                && System.nanoTime() < hardEnd) {
            Event e = events.poll(200, TimeUnit.MILLISECONDS);
            long now = System.nanoTime();
            String at = String.format(Locale.ROOT, "%5.1fs", (now - start) / 1e9);
            if (e != null) {
                String[] f = e.line().split(" ");
                switch (f[0]) {
                    case "READY" -> out.printf(Locale.ROOT, "%s  %-9s  started (pid %s)%n", at, e.worker().name, f[1]);
                    case "HOLD" -> {
                        long token = Long.parseLong(f[2]);
                        long waited = Long.parseLong(f[3]);
                        Worker w = e.worker();
                        w.grants++;
                        w.waitedTotal += waited;
                        w.waitedMax = Math.max(w.waitedMax, waited);
                        Holding previous = holders.put(f[1], new Holding(w, token, now));
                        out.printf(
                                Locale.ROOT,
                                "%s  %-9s  holds %-10s token %-12d waited %5d ms%n",
                                at,
                                w.name,
                                "'" + f[1] + "'",
                                token,
                                waited);
                        if (victim != null && f[1].equals(victimKey)) {
                            out.printf(
                                    Locale.ROOT,
                                    "        -> '%s' passed on from the killed %s to %s %.1f s after the kill;"
                                            + " token %d -> %d: the resource can refuse the dead holder's"
                                            + " late writes%n",
                                    f[1],
                                    victim.worker().name,
                                    w.name,
                                    (now - killAt) / 1e9,
                                    victim.token(),
                                    token);
                            victim = null;
                        } else if (previous != null && previous.worker() != w && previous.token() >= token) {
                            out.println("        !! token did not rise on '" + f[1] + "'");
                        }
                    }
                    case "OBSERVED" -> {
                        if (victim != null && f[1].equals(victimKey)) {
                            out.printf(
                                    Locale.ROOT,
                                    "%s  demo       holds %-10s token %-12d waited %5d ms%n"
                                            + "        -> '%s' passed on from the killed %s to the demo's own"
                                            + " client %.1f s after the kill; token %d -> %d: the resource can"
                                            + " refuse the dead holder's late writes%n",
                                    at,
                                    "'" + f[1] + "'",
                                    Long.parseLong(f[2]),
                                    Long.parseLong(f[3]),
                                    f[1],
                                    victim.worker().name,
                                    (now - killAt) / 1e9,
                                    victim.token(),
                                    Long.parseLong(f[2]));
                            victim = null;
                        }
                    }
                    case "OBSERVE-FAILED" ->
                        out.printf(
                                Locale.ROOT,
                                "%s  demo       could not wait for '%s' (see the error output)%n",
                                at,
                                f[1]);
                    case "FREE" -> {
                        Holding h = holders.get(f[1]);
                        if (h != null && h.worker() == e.worker()) {
                            holders.put(f[1], null);
                        }
                    }
                    case "EOF" -> {
                        running--;
                        if (!e.worker().killed
                                && e.worker().process.waitFor(5, TimeUnit.SECONDS)
                                && e.worker().process.exitValue() != 0) {
                            out.printf(
                                    Locale.ROOT,
                                    "%s  %-9s  failed (exit status %d)%n",
                                    at,
                                    e.worker().name,
                                    e.worker().process.exitValue());
                        }
                    }
                    default -> {
                        // WAIT and DONE: not worth a line each
                    }
                }
            }
            if (victimKey == null && now >= killAt) {
                for (Map.Entry<String, Holding> h : holders.entrySet()) {
                    if (h.getValue() != null && !h.getValue().worker().killed) {
                        victim = h.getValue();
                        victimKey = h.getKey();
                        victim.worker().killed = true;
                        victim.worker().process.destroyForcibly();
                        killAt = now;
                        out.printf(
                                Locale.ROOT,
                                "%s  %-9s  KILLED with SIGKILL while holding '%s' (token %d): no release;"
                                        + " ZooKeeper frees the lock when the session expires (%s)%n",
                                at,
                                victim.worker().name,
                                victimKey,
                                victim.token(),
                                Durations.format(SESSION));
                        watcher = watch(zkUrl, victimKey, events);
                        break;
                    }
                }
            }
            if (now >= nextSnapshot) {
                nextSnapshot = now + Duration.ofSeconds(4).toNanos();
                StringBuilder s = new StringBuilder(at + "  -- holders now:");
                holders.forEach((k, h) -> s.append("  ")
                        .append(k)
                        .append('=')
                        .append(
                                h == null
                                        ? "free"
                                        : h.worker().name
                                                + (h.worker().killed ? " (killed; session not yet expired)" : "")
                                                + " (token " + h.token() + ")"));
                out.println(s);
            }
            out.flush();
        }
        out.println();
        out.println("  worker     grants  waited avg   waited max");
        for (Worker w : started) {
            out.printf(
                    Locale.ROOT,
                    "  %-9s  %6d  %7d ms  %8d ms%s%n",
                    w.name,
                    w.grants,
                    w.grants == 0 ? 0 : w.waitedTotal / w.grants,
                    w.waitedMax,
                    w.killed ? "   (killed midway)" : "");
        }
        out.flush();
    }

    /**
     * Waits, with a client of this JVM, for the key the killed worker held, so that the hand-off after the session
     * expiry shows even when no surviving worker happens to pick that key; reports {@code OBSERVED key token
     * waitedMs} (or nothing if it timed out) and releases at once.
     */
    private static Thread watch(String zkUrl, String key, BlockingQueue<Event> events) {
        Thread t = new Thread(
                () -> {
                    long t0 = System.nanoTime();
                    try (LockClient c = Locks.open(zkUrl)) {
                        c.lock(key).tryAcquire(SESSION.multipliedBy(4)).ifPresent(l -> {
                            long token = c.features().contains(LockFeature.FENCING) ? l.fencingToken() : -1;
                            l.release();
                            events.add(new Event(
                                    null,
                                    "OBSERVED " + key + " " + token + " " + (System.nanoTime() - t0) / 1_000_000));
                        });
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } catch (RuntimeException e) {
                        System.err.println("locksmith demo: waiting for '" + key + "' failed: " + e);
                        events.add(new Event(null, "OBSERVE-FAILED " + key));
                    }
                },
                "locksmith-demo-watch");
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static void pump(Worker w, BlockingQueue<Event> events) {
        try (BufferedReader r =
                new BufferedReader(new InputStreamReader(w.process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                events.add(new Event(w, line));
            }
        } catch (IOException e) {
            // the worker died: reported as EOF
        }
        events.add(new Event(w, "EOF"));
    }

    private void stopWorkers() {
        for (Worker w : started) {
            if (w.process.isAlive()) {
                w.process.destroyForcibly();
            }
        }
        for (Worker w : started) {
            try {
                w.process.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** This JVM's class path: the locksmith jar, or (under Surefire) the real test class path. */
    static String classPath() {
        String cp = System.getProperty("surefire.test.class.path");
        return cp == null || cp.isBlank() ? System.getProperty("java.class.path") : cp;
    }

    // ---- part 2: the semantics table -----------------------------------------------------------------------

    private int table(String zkUrl) throws IOException {
        out.println();
        out.println("== Part 2: the TCK's semantics, side by side, for every backend within reach");
        out.println("   A quick selection of the contract tests (one or two per contract); `locksmith check --url"
                + " URL` runs them all.");
        out.flush();
        Map<String, String> targets = new LinkedHashMap<>();
        targets.put("zookeeper (in-process)", zkUrl);
        reachable("redis", redisUrl).ifPresent(u -> targets.put("redis", u));
        reachable("mysql", mysqlUrl).ifPresent(u -> targets.put("mysql", u));
        reachable("postgres", postgresUrl).ifPresent(u -> targets.put("postgres", u));
        Path dir = TempDirs.create("locksmith-demo-tck");
        PrintWriter quiet = new PrintWriter(java.io.Writer.nullWriter());
        int failed = 0;
        try {
            for (Map.Entry<String, String> t : targets.entrySet()) {
                TckTarget target = TckTarget.of(t.getValue(), quiet);
                List<TckRun.Outcome> outcomes = new TckRun(target.url(), dir, QUICK_SELECTION)
                        .timings(target.lease(), target.session(), target.operation())
                        .execute(
                                out,
                                String.format(Locale.ROOT, "%-10s", t.getKey().split(" ")[0]));
                failed += (int) outcomes.stream()
                        .filter(o -> o.status().equals("failed"))
                        .count();
            }
            out.println();
            out.println(TckRun.table(dir));
            out.println();
            out.println("(not run: contracts that need a fault hook; `locksmith check` lists them as skipped)");
            if (failed > 0) {
                out.println(failed + " test(s) failed: see the FAIL cells; `locksmith check --url URL` shows why.");
            }
        } finally {
            TempDirs.delete(dir);
        }
        out.flush();
        return failed > 0 ? ExitStatus.CHECK_FAILED : ExitStatus.OK;
    }

    /** {@code url} if a client opens there within about a second; otherwise says so and returns empty. */
    private java.util.Optional<String> reachable(String name, String url) {
        String probe = url;
        try {
            for (String p : new String[] {"connectTimeoutMs", "timeoutMs"}) {
                if (LockUrls.understands(probe, p)
                        && LockUrls.parameter(probe, p).isEmpty()) {
                    probe = LockUrls.with(probe, p, "1000");
                }
            }
            try (LockClient c = Locks.open(probe)) {
                out.println("   " + name + ": " + LockUrl.parse(url) + " (" + c.backend() + ", declares "
                        + String.join(
                                ", ",
                                new TreeSet<>(
                                        c.features().stream().map(Enum::name).toList())) + ")");
            }
            return java.util.Optional.of(url);
        } catch (RuntimeException e) {
            out.println("   " + name + ": not reachable at " + safe(url) + " (" + Main.describe(e)
                    + "); left out (give --" + name + "-url to point elsewhere)");
            return java.util.Optional.empty();
        } finally {
            out.flush();
        }
    }

    private static String safe(String url) {
        try {
            return LockUrl.parse(url).toString();
        } catch (RuntimeException e) {
            return "'" + url + "'";
        }
    }
}
