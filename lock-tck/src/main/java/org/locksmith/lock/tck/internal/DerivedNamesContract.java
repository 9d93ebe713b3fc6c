package org.locksmith.lock.tck.internal;

import static org.assertj.core.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;

/**
 * Contract 14, keys against the names a backend derives from them: a backend that keeps a key's queue, counter,
 * channel or lock record under the key plus a short suffix, or behind a prefix, in the same name space as the
 * users' keys, lets a user's key collide with another key's own records. C14.4 builds such names from a base key
 * and checks each one against the base key in every state the base key's records are in: held, waited for, handed
 * over, released.
 */
public final class DerivedNamesContract {
    private final TckEnv env;

    public DerivedNamesContract(TckEnv env) {
        this.env = env;
    }

    /** Separators a backend may put between a key and the name of one of its records. */
    static final List<String> SEPARATORS =
            List.of(":", ".", "/", "-", "_", "#", "|", "@", "$", "~", "+", ";", "=", " ", "::", "__", "--", "");

    /** Names of records a backend may keep for a key (queue, counter, channel, owner, lease...). */
    static final List<String> SUFFIXES =
            List.of("w", "q", "x", "n", "0", "lock", "queue", "waiters", "fence", "token", "owner", "lease");

    /** Prefixes built from these words and the first seven separators. */
    static final List<String> PREFIX_WORDS = List.of("w", "q", "lock", "locks", "queue", "fence", "lease", "notify");

    /**
     * How many derived names one round checks against the base key: client C holds them all at once, and a backend
     * may take a connection per held lock, and a pool of 10 (PostgreSQL's default) must leave room for the waiters.
     */
    static final int CHUNK = 8;

    /**
     * The names derived from {@code base}: {@code base + separator + suffix} for each separator and suffix, {@code
     * base + separator} alone, {@code word + separator + base} for the prefix words and the first seven separators,
     * and hash-tag and bracket forms ({@code {base}}, {@code {base}:w}, {@code [base]}...). In the order built, without
     * repeats.
     */
    static List<String> derivedNames(String base) {
        Set<String> names = new LinkedHashSet<>();
        for (String sep : SEPARATORS) {
            for (String suffix : SUFFIXES) {
                names.add(base + sep + suffix);
            }
            if (!sep.isEmpty()) {
                names.add(base + sep);
            }
        }
        for (String sep : SEPARATORS.subList(0, 7)) {
            for (String word : PREFIX_WORDS) {
                names.add(word + sep + base);
            }
        }
        for (String form : List.of(
                "{%s}", "{%s}:w", "{%s}:q", "{%s}.x", "{%s}:lock", "[%s]", "(%s)", "<%s>", "\"%s\"", "'%s'", "%s{w}")) {
            names.add(form.replace("%s", base));
        }
        names.remove(base);
        return List.copyOf(names);
    }

    /**
     * C14.4: for each chunk of the derived names of one base key: client A holds the base key and client W waits for
     * it ({@code acquireAsync(30 s)}); client C's {@code tryAcquire()} of every name of the chunk must be granted and
     * C keeps them; client V then waits for the chunk's first name. A releases: W must be granted the base key within
     * {@code 10 s × f}, V must not be granted, and none of the names may be grantable to A. C releases the names
     * while W holds the base key: the base key must not be grantable to A, and V must be granted within {@code 10 s ×
     * f}. Holding, waiting for, handing over or releasing a key never blocks, frees or grants another.
     */
    public void derivedNamesIndependent() throws Exception {
        LockClient a = env.client("A");
        LockClient w = env.client("W");
        LockClient c = env.client("C");
        LockClient v = env.client("V");
        String base = env.key("derived");
        List<String> names = derivedNames(base);
        Duration within = TckEnv.allow(Duration.ofSeconds(10));
        env.note("derived names checked", names.size());
        for (int from = 0; from < names.size(); from += CHUNK) {
            List<String> chunk = names.subList(from, Math.min(names.size(), from + CHUNK));
            OptionalInt entries = env.storeEntries(base);
            LockLease held = a.lock(base).acquire(Duration.ofSeconds(10));
            CompletableFuture<LockLease> waiter = w.lock(base).acquireAsync(Duration.ofSeconds(30));
            awaitQueued(base, entries, 2);
            List<LockLease> cHolds = new ArrayList<>();
            for (String name : chunk) {
                Optional<LockLease> l = c.lock(name).tryAcquire();
                if (l.isEmpty()) {
                    fail(env.at(c, name) + "could not get the free key '" + name + "' while '" + base + "' was held by"
                            + " client A and waited for by client W: distinct keys collide with the names the backend"
                            + " derives from a key (its queue, counter or lock record)");
                }
                cHolds.add(l.get());
            }
            CompletableFuture<LockLease> nameWaiter = v.lock(chunk.get(0)).acquireAsync(Duration.ofSeconds(30));
            if (waiter.isDone()) {
                fail(env.at(w, base) + "the waiter for '" + base + "' was granted or failed (" + describe(waiter)
                        + ") while client A still held it, once client C had taken " + chunk.size() + " names"
                        + " derived from it: distinct keys collide");
            }
            held.release();
            LockLease wHolds = granted(waiter, within, w, base, "after client A released it");
            for (String name : chunk) {
                Optional<LockLease> stolen = a.lock(name).tryAcquire();
                if (stolen.isPresent()) {
                    stolen.get().release();
                    fail(env.at(a, name) + "was granted '" + name + "', held by client C, after '" + base + "' was"
                            + " released and handed to its waiter: releasing a key freed another");
                }
            }
            if (nameWaiter.isDone()) {
                fail(env.at(v, chunk.get(0)) + "the waiter for '" + chunk.get(0) + "', held by client C, ended ("
                        + describe(nameWaiter) + ") when '" + base + "' was released and handed over: the wake-up"
                        + " of one key reached another");
            }
            for (LockLease l : cHolds) {
                l.release();
            }
            Optional<LockLease> stolen = a.lock(base).tryAcquire();
            if (stolen.isPresent()) {
                stolen.get().release();
                fail(env.at(a, base) + "was granted '" + base + "', held by client W, once client C released "
                        + chunk.size() + " names derived from it (" + chunk.get(0) + " ...): releasing a key freed"
                        + " another");
            }
            granted(nameWaiter, within, v, chunk.get(0), "after client C released it")
                    .release();
            if (!validWithin(wHolds, within)) {
                fail(env.at(w, base) + "the lease of '" + base + "' is not valid after client C released names derived"
                        + " from it (and did not turn valid again within " + within.toMillis() + " ms)");
            }
            wHolds.release();
        }
    }

    /**
     * Whether {@code lease} is valid now or turns valid again within {@code within}: on a loaded machine a renewal can
     * come late and leave the lease unconfirmed for a moment, which is not what this contract is about; a lease whose
     * record a release of another key destroyed is lost and never turns valid again.
     */
    private static boolean validWithin(LockLease lease, Duration within) {
        try {
            Awaitility.await().pollInterval(Duration.ofMillis(5)).atMost(within).until(lease::isValid);
            return true;
        } catch (ConditionTimeoutException e) {
            return false;
        }
    }

    private LockLease granted(
            CompletableFuture<LockLease> future, Duration within, LockClient client, String key, String situation)
            throws InterruptedException {
        try {
            return future.get(within.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError(
                    env.at(client, key) + "a waiter was not granted '" + key + "' within " + within.toMillis() + " ms "
                            + situation,
                    e);
        } catch (ExecutionException e) {
            throw new AssertionError(
                    env.at(client, key) + "a waiter for '" + key + "' failed " + situation, e.getCause());
        }
    }

    private static String describe(CompletableFuture<LockLease> f) {
        if (f.isCompletedExceptionally()) {
            try {
                f.join();
            } catch (RuntimeException e) {
                return "failed: " + e.getCause();
            }
        }
        return "granted";
    }

    /** Up to {@value #QUEUE_HEAD_START_MS} ms for the store to show {@code n} more entries for the key (not a failure: a head start). */
    /** The longest the kit gives a waiter to show in the store, and the head start of one that does not. */
    static final long QUEUE_HEAD_START_MS = 60;

    private void awaitQueued(String key, OptionalInt base, int n) throws InterruptedException {
        Probes.awaitQueued(env, key, base, n, Duration.ofMillis(QUEUE_HEAD_START_MS), Duration.ZERO, n + " waiter(s)");
    }
}
