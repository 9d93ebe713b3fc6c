package org.locksmith.lock.tck.internal;

import static org.assertj.core.api.Assertions.fail;

import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.locks.LockSupport;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockTimeoutException;

/** Small checks the contracts share; each failure message starts with {@link TckEnv#at}. */
public final class Probes {
    private Probes() {}

    /** Fails unless {@code other} cannot get {@code key} right now (one attempt, no waiting). */
    public static void assertNotGrantable(TckEnv env, LockClient other, String key, String situation) {
        Optional<LockLease> stolen = other.lock(key).tryAcquire();
        if (stolen.isPresent()) {
            stolen.get().release();
            fail(env.at(other, key) + "was granted the key while " + situation);
        }
    }

    /** Fails unless {@code other} can get and release {@code key} right now (one attempt). */
    public static void assertGrantable(TckEnv env, LockClient other, String key, String situation) {
        Optional<LockLease> lease = other.lock(key).tryAcquire();
        if (lease.isEmpty()) {
            fail(env.at(other, key) + "could not get the free key " + situation);
        }
        lease.get().release();
    }

    /**
     * Waits up to {@code bound} for {@code client} to be granted {@code key} and returns the lease and how long it
     * took; fails naming {@code situation} if the key is not granted in time.
     */
    public static Timed<LockLease> acquireWithin(
            TckEnv env, LockClient client, String key, Duration bound, String situation) throws InterruptedException {
        long start = System.nanoTime();
        try {
            LockLease lease = client.lock(key).acquire(bound);
            return new Timed<>(lease, System.nanoTime() - start);
        } catch (LockTimeoutException e) {
            throw new AssertionError(
                    env.at(client, key) + "was not granted the key within " + bound.toMillis() + " ms " + situation, e);
        }
    }

    /** A result and the nanoseconds it took. */
    public record Timed<T>(T value, long nanos) {
        public long millis() {
            return nanos / 1_000_000;
        }
    }

    /**
     * The kit's one fixed pause: waits {@code pause} for nothing in particular. Only for checks whose point is that
     * nothing happens for a while (a waiter not granted, a future not completed, a listener not called again), for
     * a pause whose length is itself the point (an observation window, the phase of a race), and as the head start of
     * an event the backend offers no way to see; {@code why} says which, so that every such pause in the kit is found
     * by searching for this method. Everything else waits for its event.
     */
    public static void quietPeriod(Duration pause, String why) throws InterruptedException {
        if (why == null || why.isBlank()) {
            throw new IllegalArgumentException("a quiet period says why");
        }
        long until = System.nanoTime() + pause.toNanos();
        for (long left; (left = until - System.nanoTime()) > 0; ) {
            LockSupport.parkNanos(left);
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted in a quiet period: " + why);
            }
        }
    }

    /**
     * Waits for {@code n} more waiters than {@code base} (the key's {@code storeEntries} while it was held without
     * them) to show in the store, up to {@code headStart}, and then {@code settle} more, from the store's record to
     * the wait itself. Returns whether they showed. Never a failure: a store need not show its waiters, and then, as
     * without the store view ({@code base} empty), the waiters get all of {@code headStart} as their head start, as
     * the kit's fixed pause of that length did before.
     */
    public static boolean awaitQueued(
            TckEnv env, String key, OptionalInt base, int n, Duration headStart, Duration settle, String who)
            throws InterruptedException {
        if (base.isEmpty()) {
            quietPeriod(headStart, "no store view: the head start of " + who);
            return false;
        }
        int expected = base.getAsInt() + n;
        long until = System.nanoTime() + headStart.toNanos();
        while (true) {
            OptionalInt now = env.storeEntries(key);
            if (now.isEmpty() || now.getAsInt() >= expected) {
                break;
            }
            long left = until - System.nanoTime();
            if (left <= 0) {
                return false; // waiters the store does not show: this was their head start
            }
            LockSupport.parkNanos(Math.min(left, QUEUE_POLL_NANOS));
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted waiting for " + who + " to show in the store");
            }
        }
        quietPeriod(settle, "from the store's record of " + who + " to the wait itself");
        return true;
    }

    /**
     * The usual {@code settle} of {@link #awaitQueued}: a waiter the store shows may still be on its way from its
     * request to its wait (a subscription, a watch); the hand-off contract's choice.
     */
    public static final Duration QUEUE_SETTLE = Duration.ofMillis(5);

    /** How often {@link #awaitQueued} looks at the store. */
    private static final long QUEUE_POLL_NANOS = 2_000_000;

    /** Nanoseconds to milliseconds with one decimal, for messages. */
    public static String ms(long nanos) {
        return String.format(Locale.ROOT, "%.1f ms", nanos / 1e6);
    }
}
