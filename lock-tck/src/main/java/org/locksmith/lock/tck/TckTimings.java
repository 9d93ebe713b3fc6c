package org.locksmith.lock.tck;

import java.time.Duration;
import java.util.Objects;

/**
 * The times a backend's test client is configured with, and the allowances the TCK grants it. Every allowance is
 * multiplied by a slack factor read from the system property {@value #FACTOR_PROPERTY} or the environment variable
 * {@value #FACTOR_ENVIRONMENT_VARIABLE} (default 1.0), so a slow machine can run the TCK unchanged.
 *
 * @param leaseTime the lease time of the test clients ({@link org.locksmith.lock.LockFeature#LEASE_EXPIRY}); keep
 *     it short (about a second) so that expiry contracts run fast
 * @param sessionTimeout how long the store takes to notice a dead session ({@link
 *     org.locksmith.lock.LockFeature#SESSION_BOUND}); the time to the next grant after a holder dies
 * @param operationTimeout how long an operation may take to fail with {@code LockBackendException} when the store
 *     is unreachable (the client's configured timeout)
 * @param handoff how long a waiter may take to be granted after a release: the median over several handoffs, each
 *     released at a different phase of any poll the waiter might make, must stay within it where {@code
 *     BLOCKING_WAKEUP} is declared (a store that wakes its waiters takes a few ms; a poll every 100 ms or more
 *     cannot stay within the default), and it is the slack for one grant in the expiry and session bounds
 * @param deadlineOvershoot how much later than asked a timed acquire may give up
 * @param renewInterval how often the clients renew a held lease ({@link
 *     org.locksmith.lock.spi.LockBackend#renewInterval()}); with the lease, it bounds how long a crashed holder's key
 *     may stay held: a renewal sent just before the crash extends the lease by one lease time, and the store may
 *     notice the expiry up to a renewal interval late
 */
public record TckTimings(
        Duration leaseTime,
        Duration sessionTimeout,
        Duration operationTimeout,
        Duration handoff,
        Duration deadlineOvershoot,
        Duration renewInterval) {

    public static final String FACTOR_PROPERTY = "locksmith.tck.timeFactor";
    public static final String FACTOR_ENVIRONMENT_VARIABLE = "LOCKSMITH_TCK_TIME_FACTOR";

    public TckTimings {
        Objects.requireNonNull(leaseTime, "leaseTime");
        Objects.requireNonNull(sessionTimeout, "sessionTimeout");
        Objects.requireNonNull(operationTimeout, "operationTimeout");
        Objects.requireNonNull(handoff, "handoff");
        Objects.requireNonNull(deadlineOvershoot, "deadlineOvershoot");
        Objects.requireNonNull(renewInterval, "renewInterval");
    }

    /** Timings whose renewal interval is a third of {@code leaseTime}, as the backends of this repository renew. */
    public TckTimings(
            Duration leaseTime,
            Duration sessionTimeout,
            Duration operationTimeout,
            Duration handoff,
            Duration deadlineOvershoot) {
        this(leaseTime, sessionTimeout, operationTimeout, handoff, deadlineOvershoot, leaseTime.dividedBy(3));
    }

    /** Lease 1 s, session 2 s, operations 2 s, hand-off 25 ms (median), overshoot 250 ms, renewal every 333 ms. */
    public static TckTimings defaults() {
        return new TckTimings(
                Duration.ofSeconds(1),
                Duration.ofSeconds(2),
                Duration.ofSeconds(2),
                Duration.ofMillis(25),
                Duration.ofMillis(250));
    }

    /** These timings with lease time {@code d} and a renewal interval of a third of it. */
    public TckTimings withLeaseTime(Duration d) {
        return new TckTimings(d, sessionTimeout, operationTimeout, handoff, deadlineOvershoot, d.dividedBy(3));
    }

    public TckTimings withSessionTimeout(Duration d) {
        return new TckTimings(leaseTime, d, operationTimeout, handoff, deadlineOvershoot, renewInterval);
    }

    public TckTimings withOperationTimeout(Duration d) {
        return new TckTimings(leaseTime, sessionTimeout, d, handoff, deadlineOvershoot, renewInterval);
    }

    public TckTimings withHandoff(Duration d) {
        return new TckTimings(leaseTime, sessionTimeout, operationTimeout, d, deadlineOvershoot, renewInterval);
    }

    public TckTimings withDeadlineOvershoot(Duration d) {
        return new TckTimings(leaseTime, sessionTimeout, operationTimeout, handoff, d, renewInterval);
    }

    public TckTimings withRenewInterval(Duration d) {
        return new TckTimings(leaseTime, sessionTimeout, operationTimeout, handoff, deadlineOvershoot, d);
    }

    /** The slack factor from {@value #FACTOR_PROPERTY} / {@value #FACTOR_ENVIRONMENT_VARIABLE}; 1.0 if unset. */
    public static double slackFactor() {
        String text = System.getProperty(FACTOR_PROPERTY);
        if (text == null || text.isBlank()) {
            text = System.getenv(FACTOR_ENVIRONMENT_VARIABLE);
        }
        if (text == null || text.isBlank()) {
            return 1.0;
        }
        try {
            double f = Double.parseDouble(text.trim());
            if (f >= 1.0 && f <= 100.0) {
                return f;
            }
        } catch (NumberFormatException ignored) {
            // fall through to the message below
        }
        throw new IllegalArgumentException(
                FACTOR_PROPERTY + "/" + FACTOR_ENVIRONMENT_VARIABLE + " must be a number from 1 to 100, got " + text);
    }

    /** {@code d} stretched by the slack factor: use it for every allowance (never for configured times). */
    public static Duration allow(Duration d) {
        return Duration.ofNanos((long) (d.toNanos() * slackFactor()));
    }
}
