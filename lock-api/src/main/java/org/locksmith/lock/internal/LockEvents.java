package org.locksmith.lock.internal;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;
import org.locksmith.lock.spi.BackendLease;

/**
 * The JDK Flight Recorder events of the core, one per thing a user of a lock wants to see over time: grants with
 * their wait, releases with their hold, timeouts, losses with their reason, renewals that failed and store failures.
 * Each is off unless a recording enables it ({@code jfr configure}, {@code -XX:StartFlightRecording}, JDK Mission
 * Control); then the emit methods below are one check of a flag and the JIT removes the event object. Names start
 * with {@code org.locksmith.}, all are in the category "Locksmith", none records a stack trace (it would cost more
 * than the lock). Times are {@link System#nanoTime()} differences.
 */
final class LockEvents {
    private LockEvents() {}

    /** A lease the store granted (not a re-entry, which is not an event): how long the caller waited for it. */
    @Name("org.locksmith.LockAcquired")
    @Label("Lock Acquired")
    @Category("Locksmith")
    @Description("A lease granted by the store, and how long the caller waited for it")
    @StackTrace(false)
    static final class Acquired extends Event {
        @Label("Backend")
        String backend;

        @Label("Key")
        String key;

        @Label("Wait Time")
        @Timespan(Timespan.NANOSECONDS)
        long waitTime;

        @Label("Fencing Token")
        @Description("-1 if the backend does not issue fencing tokens")
        long fencingToken;
    }

    /** A lease released by its owner or by close(): how long it was held. */
    @Name("org.locksmith.LockReleased")
    @Label("Lock Released")
    @Category("Locksmith")
    @Description("A lease released by its owner or when its client closed, and how long it was held")
    @StackTrace(false)
    static final class Released extends Event {
        @Label("Backend")
        String backend;

        @Label("Key")
        String key;

        @Label("Hold Time")
        @Timespan(Timespan.NANOSECONDS)
        long holdTime;

        @Label("Lost")
        @Description("Whether the lease had been lost before this release")
        boolean lost;
    }

    /** A timed acquire that gave up at its deadline. */
    @Name("org.locksmith.LockTimedOut")
    @Label("Lock Timed Out")
    @Category("Locksmith")
    @Description("A timed acquire that gave up at its deadline without the lock")
    @StackTrace(false)
    static final class TimedOut extends Event {
        @Label("Backend")
        String backend;

        @Label("Key")
        String key;

        @Label("Wait Time")
        @Timespan(Timespan.NANOSECONDS)
        long waitTime;
    }

    /** A lease lost while held: the reason is the {@code LockLostException}'s message. */
    @Name("org.locksmith.LockLost")
    @Label("Lock Lost")
    @Category("Locksmith")
    @Description("A lease lost while held (expired, taken over, its session ended, its state deleted)")
    @StackTrace(false)
    static final class Lost extends Event {
        @Label("Backend")
        String backend;

        @Label("Key")
        String key;

        @Label("Reason")
        String reason;
    }

    /** A renewal of a held lease that the store did not confirm; the core tries again. */
    @Name("org.locksmith.LockRenewalFailed")
    @Label("Lock Renewal Failed")
    @Category("Locksmith")
    @Description("A renewal of a held lease that the store did not confirm; it is tried again")
    @StackTrace(false)
    static final class RenewalFailed extends Event {
        @Label("Backend")
        String backend;

        @Label("Key")
        String key;

        @Label("Reason")
        String reason;
    }

    /** A store failure the caller of an operation saw as {@code LockBackendException}. */
    @Name("org.locksmith.LockBackendError")
    @Label("Lock Backend Error")
    @Category("Locksmith")
    @Description("A store failure reported to the caller as LockBackendException")
    @StackTrace(false)
    static final class BackendError extends Event {
        @Label("Backend")
        String backend;

        @Label("Key")
        String key;

        @Label("Operation")
        String operation;

        @Label("Message")
        String message;
    }

    /**
     * {@link System#nanoTime()} if a recording wants the wait of an acquire (granted or timed out), else 0: the
     * clock is not read for nothing on the uncontended path.
     */
    static long acquireStart() {
        return new Acquired().isEnabled() || new TimedOut().isEnabled() ? System.nanoTime() : 0;
    }

    /**
     * A grant; nothing if the recording began during the wait ({@code startNanos} 0). The token is read from {@code
     * lease} only when the event is recorded, and only if {@code fencing}.
     */
    static void acquired(String backend, String key, long startNanos, BackendLease lease, boolean fencing) {
        Acquired e = new Acquired();
        if (startNanos != 0 && e.shouldCommit()) {
            e.backend = backend;
            e.key = key;
            e.waitTime = System.nanoTime() - startNanos;
            e.fencingToken = fencing ? lease.fencingToken() : -1;
            e.commit();
        }
    }

    static void released(String backend, String key, long grantedAtNanos, boolean lost) {
        Released e = new Released();
        if (e.shouldCommit()) {
            e.backend = backend;
            e.key = key;
            e.holdTime = System.nanoTime() - grantedAtNanos;
            e.lost = lost;
            e.commit();
        }
    }

    /** A timeout; nothing if the recording began during the wait ({@code startNanos} 0). */
    static void timedOut(String backend, String key, long startNanos) {
        TimedOut e = new TimedOut();
        if (startNanos != 0 && e.shouldCommit()) {
            e.backend = backend;
            e.key = key;
            e.waitTime = System.nanoTime() - startNanos;
            e.commit();
        }
    }

    static void lost(String backend, String key, String reason) {
        Lost e = new Lost();
        if (e.shouldCommit()) {
            e.backend = backend;
            e.key = key;
            e.reason = reason;
            e.commit();
        }
    }

    /** A renewal not confirmed, because of {@code cause} (its text is built only when the event is recorded). */
    static void renewalFailed(String backend, String key, Object cause) {
        RenewalFailed e = new RenewalFailed();
        if (e.shouldCommit()) {
            e.backend = backend;
            e.key = key;
            e.reason = String.valueOf(cause);
            e.commit();
        }
    }

    static void backendError(String backend, String key, String operation, RuntimeException error) {
        BackendError e = new BackendError();
        if (e.shouldCommit()) {
            e.backend = backend;
            e.key = key;
            e.operation = operation;
            e.message = String.valueOf(error.getMessage());
            e.commit();
        }
    }
}
