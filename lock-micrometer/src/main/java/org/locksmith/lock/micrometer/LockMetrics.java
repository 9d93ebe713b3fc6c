package org.locksmith.lock.micrometer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockObserver;

/**
 * A Locksmith client's lock events as Micrometer meters:
 *
 * <pre>{@code
 * LockClient locks = Locks.open(url);
 * LockMetrics.bind(locks, registry);                                // tagged by backend only
 * LockMetrics.builder(registry).keyTag(k -> k.split(":")[0]).bind(locks);   // and by key prefix
 * }</pre>
 *
 * <table>
 * <caption>Meters (every one tagged {@code backend}, plus the extra tags and the key tag if configured)</caption>
 * <tr><th>name</th><th>type</th><th>what</th></tr>
 * <tr><td>{@code locksmith.lock.wait}</td><td>timer, tag {@code outcome} = {@code acquired} | {@code timed_out}</td>
 * <td>how long callers waited for a grant, or until they gave up</td></tr>
 * <tr><td>{@code locksmith.lock.held}</td><td>timer, tag {@code lost} = {@code true} | {@code false}</td>
 * <td>how long leases were held, counted at release</td></tr>
 * <tr><td>{@code locksmith.lock.lost}</td><td>counter</td><td>leases lost while held</td></tr>
 * <tr><td>{@code locksmith.lock.renewal.failures}</td><td>counter</td>
 * <td>renewals (session checks) not confirmed; the core retried them</td></tr>
 * <tr><td>{@code locksmith.lock.backend.errors}</td><td>counter, tag {@code operation}</td>
 * <td>store failures during acquire or release</td></tr>
 * <tr><td>{@code locksmith.lock.leases.held}</td><td>gauge</td><td>leases granted and not yet released</td></tr>
 * </table>
 *
 * <p>Keys are not a tag by default: a tag with one value per key would make a meter per key, without bound. {@link
 * Builder#keyTag} maps each key to a tag value; the mapping must have few distinct results (a key's prefix, a
 * job name), and a key it maps to null is tagged {@code other}. Re-entrant acquires and releases are not counted.
 * Recording costs a registry lookup per event on the thread that acquired or released (see {@link LockObserver}).
 *
 * <p>Without a key tag, {@link #bind} registers {@code locksmith.lock.lost}, {@code locksmith.lock.renewal.failures},
 * {@code locksmith.lock.backend.errors} (operations {@code acquire} and {@code release}) and {@code
 * locksmith.lock.leases.held} at zero: a scrape shows them before the first event, so an alert such as {@code
 * increase(locksmith_lock_lost_total[5m]) > 0} sees the first loss. With a key tag they appear per tag value at the
 * first event of that value.
 */
public final class LockMetrics implements LockObserver {
    private final MeterRegistry registry;
    private final Tags tags;
    private final Function<String, String> keyTag;
    private final Map<String, Meters> meters = new ConcurrentHashMap<>();

    private LockMetrics(MeterRegistry registry, Tags tags, Function<String, String> keyTag) {
        this.registry = registry;
        this.tags = tags;
        this.keyTag = keyTag;
    }

    /**
     * Records {@code client}'s events in {@code registry}, tagged by backend only.
     *
     * @return the observer added to the client (remove it with {@link LockClient#removeObserver})
     */
    public static LockMetrics bind(LockClient client, MeterRegistry registry) {
        return builder(registry).bind(client);
    }

    /** A builder for extra tags and a key tag. */
    public static Builder builder(MeterRegistry registry) {
        return new Builder(Objects.requireNonNull(registry, "registry"));
    }

    /** Settings of the meters; {@link #bind} adds them to a client. Not thread-safe. */
    public static final class Builder {
        private final MeterRegistry registry;
        private Tags tags = Tags.empty();
        private Function<String, String> keyTag;

        private Builder(MeterRegistry registry) {
            this.registry = registry;
        }

        /** Tags added to every meter (an application or pool name, say). */
        public Builder tags(Iterable<Tag> tags) {
            this.tags = this.tags.and(Objects.requireNonNull(tags, "tags"));
            return this;
        }

        /**
         * Tags every meter with {@code key} = {@code mapping.apply(lockKey)}. The mapping must give few distinct
         * values; null gives {@code other}.
         */
        public Builder keyTag(Function<String, String> mapping) {
            this.keyTag = Objects.requireNonNull(mapping, "mapping");
            return this;
        }

        /**
         * Adds the meters' observer to {@code client} and returns it. Without a key tag, the loss, renewal-failure
         * and backend-error counters and the held-leases gauge of the client's backend are registered at once, at
         * zero, so that an alert on them has a series before the first event; with a key tag, each key tag value's
         * meters are registered at its first event (the values are not known before).
         */
        public LockMetrics bind(LockClient client) {
            LockMetrics metrics = new LockMetrics(registry, tags, keyTag);
            if (keyTag == null) {
                metrics.meters(client.backend(), "").registerAtZero();
            }
            client.addObserver(metrics);
            return metrics;
        }
    }

    /**
     * The meters of one backend and key tag, each registered on its first use and kept: recording on the acquiring
     * or releasing thread is then a map lookup, not a tag list sorted and a registry searched per event.
     */
    private final class Meters {
        final Tags tags;
        final AtomicLong held = new AtomicLong();
        private final Map<String, Meter> built = new ConcurrentHashMap<>();
        private volatile boolean gauge;

        Meters(Tags tags) {
            this.tags = tags;
        }

        Timer waitTimer(String outcome) {
            return (Timer) built.computeIfAbsent(
                    "wait " + outcome,
                    k -> Timer.builder("locksmith.lock.wait")
                            .description("How long callers waited for a grant, or until they gave up")
                            .tags(tags)
                            .tag("outcome", outcome)
                            .register(registry));
        }

        Timer heldTimer(boolean lost) {
            return (Timer) built.computeIfAbsent(
                    "held " + lost,
                    k -> Timer.builder("locksmith.lock.held")
                            .description("How long leases were held, counted at release")
                            .tags(tags)
                            .tag("lost", String.valueOf(lost))
                            .register(registry));
        }

        Counter counter(String name, String description, String operation) {
            return (Counter) built.computeIfAbsent(name + " " + operation, k -> {
                Counter.Builder b =
                        Counter.builder(name).description(description).tags(tags);
                return (operation == null ? b : b.tag("operation", operation)).register(registry);
            });
        }

        /** The counters an alert watches, and the gauge, registered with no event yet. */
        void registerAtZero() {
            lostCounter();
            renewalFailures();
            errors("acquire");
            errors("release");
            held();
        }

        Counter lostCounter() {
            return counter("locksmith.lock.lost", "Leases lost while held", null);
        }

        Counter renewalFailures() {
            return counter(
                    "locksmith.lock.renewal.failures", "Renewals or session checks not confirmed (retried)", null);
        }

        Counter errors(String operation) {
            return counter("locksmith.lock.backend.errors", "Store failures during acquire or release", operation);
        }

        AtomicLong held() {
            if (!gauge) {
                synchronized (this) {
                    if (!gauge) {
                        Gauge.builder("locksmith.lock.leases.held", held, AtomicLong::get)
                                .description("Leases granted and not yet released")
                                .tags(tags)
                                .register(registry);
                        gauge = true;
                    }
                }
            }
            return held;
        }
    }

    private Meters meters(String backend, String key) {
        String value = keyTag == null ? null : keyTag.apply(key);
        String id = keyTag == null ? backend : backend + '\u0000' + (value == null ? "other" : value);
        return meters.computeIfAbsent(id, k -> {
            Tags t = tags.and("backend", backend);
            if (keyTag != null) {
                t = t.and("key", value == null ? "other" : value);
            }
            return new Meters(t);
        });
    }

    @Override
    public void acquired(String backend, String key, long waitNanos, long fencingToken) {
        Meters m = meters(backend, key);
        m.waitTimer("acquired").record(waitNanos, TimeUnit.NANOSECONDS);
        m.held().incrementAndGet();
    }

    @Override
    public void released(String backend, String key, long holdNanos, boolean lost) {
        Meters m = meters(backend, key);
        m.heldTimer(lost).record(holdNanos, TimeUnit.NANOSECONDS);
        m.held().decrementAndGet();
    }

    @Override
    public void timedOut(String backend, String key, long waitNanos) {
        meters(backend, key).waitTimer("timed_out").record(waitNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void lost(String backend, String key, String reason) {
        meters(backend, key).lostCounter().increment();
    }

    @Override
    public void renewalFailed(String backend, String key, String reason) {
        meters(backend, key).renewalFailures().increment();
    }

    @Override
    public void backendError(String backend, String key, String operation, LockBackendException error) {
        meters(backend, key).errors(operation).increment();
    }
}
