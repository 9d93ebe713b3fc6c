package org.locksmith.lock.tck.internal;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.tck.TckTimings;

/**
 * A worker process that acquires a key and is killed with SIGKILL while holding it: the crash the expiry,
 * session and fencing contracts are about.
 *
 * @param token the killed holder's fencing token, or -1 without FENCING
 * @param killedAtNanos when the kill was sent ({@link System#nanoTime()})
 */
public record KilledHolder(long token, long killedAtNanos) {

    /** Starts the holder, checks that {@code observer} is excluded while it holds, then kills it. */
    public static KilledHolder run(TckEnv env, Path dir, String url, String key, LockClient observer) throws Exception {
        WorkerProcess worker = WorkerProcess.start(dir, Duration.ofSeconds(60), "hold", url, key);
        env.closeAtEnd(worker);
        String line = worker.awaitLine("ACQUIRED", TckEnv.allow(Duration.ofSeconds(30)));
        long token = Long.parseLong(line.split(" ")[1]);
        Probes.assertNotGrantable(env, observer, key, "worker process " + worker.pid() + " held it");
        long killedAt = System.nanoTime();
        worker.kill();
        return new KilledHolder(token, killedAt);
    }

    /**
     * How long after a holder's crash the key must be granted again: {@link #leaseExpiryBound} (LEASE_EXPIRY) or 1.5
     * session timeouts plus the hand-off (SESSION_BOUND; a store notices a silent session on its own tick, such as
     * ZooKeeper's session buckets), whichever is shorter; empty with neither.
     */
    public static Optional<Duration> freeBound(TckEnv env) {
        TckTimings t = env.timings();
        Duration best = null;
        if (env.has(LockFeature.LEASE_EXPIRY)) {
            best = leaseExpiryBound(t);
        }
        if (env.has(LockFeature.SESSION_BOUND)) {
            Duration session = t.sessionTimeout().multipliedBy(3).dividedBy(2).plus(t.handoff());
            best = best == null || session.compareTo(best) < 0 ? session : best;
        }
        return Optional.ofNullable(best).map(TckEnv::allow);
    }

    /**
     * How long after a crash a lease the holder stopped renewing may keep its key: the lease (a renewal sent just
     * before the crash extends it by that much), plus a renewal interval for that renewal in flight and the store's
     * expiry tick, plus the hand-off. A store that keeps unrenewed leases a third longer than it declares fails it
     * (with the default renewal interval).
     */
    public static Duration leaseExpiryBound(TckTimings t) {
        return t.leaseTime().plus(t.renewInterval()).plus(t.handoff());
    }
}
