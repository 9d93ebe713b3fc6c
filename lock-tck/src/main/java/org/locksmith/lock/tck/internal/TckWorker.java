package org.locksmith.lock.tck.internal;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.locksmith.lock.DistributedLock;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.LockTimeoutException;
import org.locksmith.lock.Locks;

/**
 * The main class of a TCK worker process: opens a client with {@link Locks#open(String)} and acts as a lock holder
 * in another JVM. Started by {@link WorkerProcess}; it ends by itself after its lifetime even if nobody stops it.
 *
 * <pre>
 * hold  URL KEY LIFETIME_MS                 acquire, print "ACQUIRED token nanoTime", hold until killed
 * loop  URL KEY LIFETIME_MS COUNT OUT COUNTER  wait for a line "GO" on stdin, then COUNT times: acquire, bump the
 *                                             non-atomic counter file, record "startNanos endNanos token" in OUT,
 *                                             release, sleep 0-20 ms; print "DONE"
 * believe URL KEY LIFETIME_MS               acquire, print "ACQUIRED token nanoTime", then every 0.1 ms read the
 *                                             wall clock and then isValid(); print "VALID micros" (epoch microseconds)
 *                                             at most once a millisecond and for the last valid look, and
 *                                             "INVALID micros" once it is not, and stop
 * chaos URL KEY LIFETIME_MS SEED           contend on KEY until killed, each round through a random entry point
 *                                             (acquire(t), acquire(ZERO), tryAcquire(), tryAcquire(t), asLock().lock(),
 *                                             asLock().tryLock(t)); print "G n token micros" once granted (clock read
 *                                             after the grant), "V n micros" while valid (clock read before
 *                                             isValid(), at most once a millisecond and for the last valid look),
 *                                             "R n" before the release, "E n" after it, "L n" if it reported a loss
 * wait  URL KEY LIFETIME_MS                 for each line "GO n" read from stdin: print "WAITING n", acquire (30 s),
 *                                             print "GRANTED n nanoTime" (clock read right after the grant), release,
 *                                             print "FREED n"; ends at the end of stdin
 * </pre>
 */
public final class TckWorker {
    private TckWorker() {}

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        String url = args[1];
        String key = args[2];
        long lifetimeMs = Long.parseLong(args[3]);
        Thread reaper = new Thread(
                () -> {
                    try {
                        Thread.sleep(lifetimeMs);
                    } catch (InterruptedException e) {
                        return;
                    }
                    System.err.println("worker lifetime of " + lifetimeMs + " ms is over: exiting");
                    Runtime.getRuntime().halt(3);
                },
                "tck-worker-reaper");
        reaper.setDaemon(true);
        reaper.start();
        try (LockClient client = Locks.open(url)) {
            boolean fencing = client.features().contains(LockFeature.FENCING);
            System.out.println("READY " + ProcessHandle.current().pid());
            System.out.flush();
            switch (mode) {
                case "hold" -> {
                    LockLease lease = client.lock(key).acquire(Duration.ofMillis(lifetimeMs));
                    System.out.println("ACQUIRED " + (fencing ? lease.fencingToken() : -1) + " " + System.nanoTime());
                    System.out.flush();
                    Thread.sleep(lifetimeMs); // held until the harness kills this process
                }
                case "believe" -> believe(client.lock(key).acquire(Duration.ofMillis(lifetimeMs)), fencing);
                case "chaos" -> new Chaos(client, key, fencing, Long.parseLong(args[4])).run();
                case "wait" -> waitOnRequest(client, key);
                case "loop" ->
                    loop(client, key, fencing, Integer.parseInt(args[4]), Path.of(args[5]), Path.of(args[6]));
                default -> throw new IllegalArgumentException("unknown worker mode " + mode);
            }
        } catch (Throwable t) {
            t.printStackTrace();
            System.out.println("ERROR " + t);
            System.out.flush();
            Runtime.getRuntime().halt(2);
        }
        System.out.flush();
        Runtime.getRuntime().halt(0);
    }

    /**
     * Reports every moment this process believes it holds: the clock is read first, so a valid answer proves the
     * belief at that instant or later. The pause contract stops this process and compares these moments with the
     * grant of another client.
     */
    private static void believe(LockLease lease, boolean fencing) {
        System.out.println("ACQUIRED " + (fencing ? lease.fencingToken() : -1) + " " + System.nanoTime());
        System.out.flush();
        long lastValid = -1;
        long lastPrinted = 0;
        while (true) {
            long now = ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
            if (!lease.isValid()) {
                if (lastValid >= 0) {
                    System.out.println("VALID " + lastValid); // the last moment believed, whenever it was
                }
                System.out.println("INVALID " + now);
                System.out.flush();
                return;
            }
            lastValid = now;
            if (now - lastPrinted >= 1000) {
                System.out.println("VALID " + now);
                System.out.flush();
                lastPrinted = now;
            }
            // Looks again within ~0.1 ms: after a SIGCONT this thread looks before a renewal round can finish.
            LockSupport.parkNanos(100_000);
        }
    }

    /** Epoch microseconds: comparable between processes on one machine, unlike {@link System#nanoTime()}. */
    static long micros() {
        return ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
    }

    /**
     * The {@code chaos} mode: one contender of the fault-load contract. Every grant becomes an interval from the
     * moment after the grant to the last moment {@code isValid()} was seen true; the contract compares the intervals
     * of all workers, so that each line must be printed before anything else happens (a kill may come at any time).
     */
    private static final class Chaos {
        private final LockClient client;
        private final String key;
        private final boolean fencing;
        private final boolean reentrant;
        private final Random random;

        Chaos(LockClient client, String key, boolean fencing, long seed) {
            this.client = client;
            this.key = key;
            this.fencing = fencing;
            this.reentrant = client.features().contains(LockFeature.REENTRANT);
            this.random = new Random(seed);
        }

        void run() throws InterruptedException {
            DistributedLock lock = client.lock(key);
            for (long n = 1; ; n++) {
                int entry = random.nextInt(6);
                Duration wait = Duration.ofMillis(50 + random.nextInt(1500));
                try {
                    if (entry < 4) {
                        Optional<LockLease> lease = switch (entry) {
                            case 0 -> Optional.of(lock.acquire(wait));
                            case 1 -> Optional.of(lock.acquire(Duration.ZERO));
                            case 2 -> lock.tryAcquire();
                            default -> lock.tryAcquire(wait);
                        };
                        if (lease.isEmpty()) {
                            backOff();
                            continue;
                        }
                        hold(n, lease.get().fencingToken(), lease.get()::isValid);
                        release(n, lease.get()::release);
                    } else {
                        Lock juc = lock.asLock();
                        if (entry == 4) {
                            juc.lock();
                        } else if (!juc.tryLock(wait.toMillis(), TimeUnit.MILLISECONDS)) {
                            backOff();
                            continue;
                        }
                        long token = -1;
                        if (fencing && reentrant) { // the token of a Lock hold: re-enter it, at no round trip
                            try (LockLease inner = lock.acquire(Duration.ZERO)) {
                                token = inner.fencingToken();
                            } catch (LockLostException lostAlready) {
                                release(n, juc::unlock); // lost before it could be used: nothing to record
                                continue;
                            }
                        }
                        hold(n, token, lock::isHeldByCurrentThread);
                        release(n, juc::unlock);
                    }
                } catch (LockTimeoutException e) {
                    backOff();
                } catch (LockBackendException | LockLostException e) {
                    // A store the contract cuts off or a session it ends: report, and contend again.
                    say("X " + n + " " + e.getClass().getSimpleName());
                    Thread.sleep(5);
                }
            }
        }

        private void backOff() throws InterruptedException {
            Thread.sleep(random.nextInt(4));
        }

        private void hold(long n, long token, BooleanSupplier valid) {
            say("G " + n + " " + (fencing ? token : -1) + " " + micros());
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(random.nextInt(25));
            long lastValid = -1;
            long lastPrinted = 0;
            long lastLook = micros();
            while (true) {
                long now = micros();
                if (now - lastLook > 200_000) {
                    // This process was stopped (SIGSTOP, a GC pause): it goes on with its work for a while, as a
                    // resumed process would, looking at its lease all along.
                    until = Math.max(until, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100));
                }
                lastLook = now;
                if (!valid.getAsBoolean()) {
                    break;
                }
                lastValid = now;
                if (now - lastPrinted >= 1000) {
                    say("V " + n + " " + now);
                    lastPrinted = now;
                }
                if (System.nanoTime() - until >= 0) {
                    break;
                }
                LockSupport.parkNanos(200_000);
            }
            if (lastValid > lastPrinted) {
                say("V " + n + " " + lastValid);
            }
        }

        private void release(long n, Runnable release) {
            say("R " + n); // from here on this process may have given the key up: no holder for the faults
            try {
                release.run();
                say("E " + n);
            } catch (LockLostException e) {
                say("L " + n);
            } catch (LockBackendException | IllegalMonitorStateException e) {
                say("X " + n + " release: " + e.getClass().getSimpleName());
            }
        }

        private static void say(String line) {
            System.out.println(line);
            System.out.flush();
        }
    }

    /**
     * The {@code wait} mode: a waiter in another JVM for the hand-off contract, which holds the key, sends "GO n",
     * releases some time after "WAITING n" and compares its release with the grant time printed here. {@link
     * System#nanoTime()} is comparable between processes of one Linux host (CLOCK_MONOTONIC), as in {@code loop}.
     */
    private static void waitOnRequest(LockClient client, String key) throws IOException, InterruptedException {
        BufferedReader in = stdin();
        String line;
        while ((line = in.readLine()) != null) {
            if (!line.startsWith("GO ")) {
                throw new IllegalArgumentException("unknown request " + line);
            }
            String n = line.substring(3).trim();
            System.out.println("WAITING " + n);
            System.out.flush();
            LockLease lease = client.lock(key).acquire(Duration.ofSeconds(30));
            long grantedAt = System.nanoTime();
            lease.release();
            System.out.println("GRANTED " + n + " " + grantedAt);
            System.out.println("FREED " + n);
            System.out.flush();
        }
    }

    /** The harness's requests, a line each (read once per worker: a second reader would lose buffered lines). */
    private static BufferedReader stdin() {
        return new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    }

    private static void loop(LockClient client, String key, boolean fencing, int count, Path out, Path counter)
            throws InterruptedException, IOException {
        // Starts with the others: the harness sends "GO" once every worker is READY, so that the workers contend
        // instead of running one after another as their JVMs happen to start.
        String go = stdin().readLine();
        if (!"GO".equals(go)) {
            throw new IllegalArgumentException("expected GO on stdin, got " + go);
        }
        StringBuilder records = new StringBuilder();
        for (int i = 0; i < count; i++) {
            try (LockLease lease = client.lock(key).acquire(Duration.ofSeconds(30))) {
                long start = System.nanoTime();
                // A non-atomic read-modify-write: only mutual exclusion keeps the count right.
                String text = Files.readString(counter, StandardCharsets.UTF_8).trim();
                long value = text.isEmpty() ? 0 : Long.parseLong(text);
                Thread.sleep(1); // widen the window in which a second holder would be caught
                Files.writeString(counter, Long.toString(value + 1), StandardCharsets.UTF_8);
                long end = System.nanoTime();
                records.append(start)
                        .append(' ')
                        .append(end)
                        .append(' ')
                        .append(fencing ? lease.fencingToken() : -1)
                        .append('\n');
            }
            // Out of the key for 0-20 ms: a holder that takes the key again at once would keep it from the other
            // processes for all its rounds (their waits may poll), and the processes would take turns only once each.
            Thread.sleep(java.util.concurrent.ThreadLocalRandom.current().nextInt(21));
        }
        Files.writeString(
                out, records, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING);
        System.out.println("DONE");
        System.out.flush();
    }
}
