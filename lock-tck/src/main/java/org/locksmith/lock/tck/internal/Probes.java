package org.locksmith.lock.tck.internal;

import static org.assertj.core.api.Assertions.fail;

import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
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

    /** Nanoseconds to milliseconds with one decimal, for messages. */
    public static String ms(long nanos) {
        return String.format(Locale.ROOT, "%.1f ms", nanos / 1e6);
    }
}
