package org.locksmith.lock.cli;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;

/**
 * One worker process of {@code locksmith demo}: until its end time, it picks one of the keys, waits for its lock,
 * holds it for a moment (the "job"), releases it, and reports every step on stdout, one line each:
 *
 * <pre>
 * READY pid
 * WAIT key
 * HOLD key token waitedMs
 * FREE key heldMs
 * DONE
 * </pre>
 *
 * It ends by itself at the end time, and at once when its stdin closes (the demo that started it is gone).
 * Arguments: {@code URL DURATION_MS KEY[,KEY...]}.
 */
public final class DemoWorker {
    private DemoWorker() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: DemoWorker URL DURATION_MS KEY[,KEY...]");
            System.exit(ExitStatus.USAGE);
        }
        String url = args[0];
        long end =
                System.nanoTime() + Duration.ofMillis(Long.parseLong(args[1])).toNanos();
        List<String> keys = List.of(args[2].split(","));
        Thread orphanWatch = new Thread(DemoWorker::exitWhenParentGone, "demo-worker-parent-watch");
        orphanWatch.setDaemon(true);
        orphanWatch.start();
        ThreadLocalRandom random = ThreadLocalRandom.current();
        try (LockClient client = Locks.open(url)) {
            boolean fencing = client.features().contains(LockFeature.FENCING);
            say("READY " + ProcessHandle.current().pid());
            while (System.nanoTime() < end) {
                String key = keys.get(random.nextInt(keys.size()));
                say("WAIT " + key);
                long t0 = System.nanoTime();
                Optional<LockLease> lease = client.lock(key).tryAcquire(Duration.ofNanos(Math.max(0, end - t0)));
                if (lease.isEmpty()) {
                    break;
                }
                long waited = (System.nanoTime() - t0) / 1_000_000;
                try (LockLease l = lease.get()) {
                    say("HOLD " + key + " " + (fencing ? l.fencingToken() : -1) + " " + waited);
                    long hold = 400 + random.nextInt(900);
                    Thread.sleep(hold); // the "job" done under the lock
                    say("FREE " + key + " " + hold);
                }
                Thread.sleep(50 + random.nextInt(200)); // let the others in
            }
        }
        say("DONE");
    }

    private static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static void exitWhenParentGone() {
        try {
            InputStream in = System.in;
            while (in.read() >= 0) {
                // the demo never writes: only end of stream matters
            }
        } catch (IOException e) {
            // same as end of stream
        }
        Runtime.getRuntime().halt(1);
    }
}
