package org.locksmith.lock.springboot;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The health of a {@link LockClient}'s store: UP when one {@code tryAcquire()} of a reserved key (then its release)
 * gets an answer within the timeout, DOWN when the store fails or does not answer in time.
 *
 * <p>Details: {@code backend}; {@code probe} ({@code granted}, or {@code held elsewhere} when another instance's
 * probe held the key at that moment, which proves the store answered too); {@code heldLeases}, the leases this client
 * holds now (granted, not yet released; a lost lease counts until its owner releases it); {@code lostRecently}, the
 * leases lost within {@code lostWindow}. Losses do not turn the status DOWN: a lost lease is the holder's to handle
 * (its {@code onLost} listeners and {@code isValid()}), and the store may be fine again; alert on the count instead.
 *
 * <p>The probe runs on a daemon thread of its own ({@code locksmith-health}), so a store that hangs costs the health
 * endpoint the timeout, not more; the thread stops when the context closes.
 */
public class LocksmithHealthIndicator implements HealthIndicator, DisposableBean {

    private final LockClient client;
    private final String key;
    private final Duration timeout;
    private final Duration lostWindow;
    private final LeaseTally tally;
    private final ExecutorService prober = Executors.newSingleThreadExecutor(task -> {
        Thread thread = new Thread(task, "locksmith-health");
        thread.setDaemon(true);
        return thread;
    });

    /**
     * An indicator for {@code client}, counting its leases from now on.
     *
     * @param client the client whose store is probed
     * @param key the reserved key the probe takes; no application lock may use it
     * @param timeout how long a probe may take before the store is reported DOWN
     * @param lostWindow how far back {@code lostRecently} counts
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if timeout or lostWindow is not positive
     */
    public LocksmithHealthIndicator(LockClient client, String key, Duration timeout, Duration lostWindow) {
        this.client = Objects.requireNonNull(client, "client");
        this.key = Objects.requireNonNull(key, "key");
        this.timeout = positive(timeout, "locksmith.health.timeout");
        this.lostWindow = positive(lostWindow, "locksmith.health.lost-window");
        this.tally = new LeaseTally(key, lostWindow);
        client.addObserver(tally);
    }

    private static Duration positive(Duration value, String name) {
        Objects.requireNonNull(value, name);
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, not " + value);
        }
        return value;
    }

    /** Probes the store as the class comment says; never throws. */
    @Override
    public Health health() {
        Health.Builder health;
        Future<Boolean> probe;
        try {
            probe = prober.submit(() -> {
                Optional<LockLease> lease = client.lock(key).tryAcquire();
                lease.ifPresent(LockLease::release);
                return lease.isPresent();
            });
        } catch (RejectedExecutionException closing) {
            return Health.unknown()
                    .withDetail("error", "the application context is closing")
                    .build();
        }
        try {
            boolean granted = probe.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            health = Health.up().withDetail("probe", granted ? "granted" : "held elsewhere");
        } catch (TimeoutException e) {
            probe.cancel(true);
            health = Health.down().withDetail("error", "the store did not answer within " + timeout);
        } catch (ExecutionException e) {
            health = Health.down(e.getCause() instanceof Exception cause ? cause : e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            probe.cancel(true);
            health = Health.unknown().withDetail("error", "interrupted");
        }
        return health.withDetail("backend", client.backend())
                .withDetail("heldLeases", tally.held())
                .withDetail("lostRecently", tally.lostRecently())
                .withDetail("lostWindow", lostWindow.toString())
                .build();
    }

    /** Stops the probe thread and the counting. */
    @Override
    public void destroy() {
        prober.shutdownNow();
        try {
            client.removeObserver(tally);
        } catch (IllegalStateException closedAlready) {
            // the client is closed: it sends no more events anyway
        }
    }
}
