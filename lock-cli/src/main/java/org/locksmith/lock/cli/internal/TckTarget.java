package org.locksmith.lock.cli.internal;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.Optional;

/**
 * A deployment's URL made ready for the TCK: where the URL leaves the lease or session timeout to the backend's
 * default (30 s), short ones are set, so that the expiry and renewal contracts take seconds instead of minutes;
 * times the URL sets are kept, and the TCK's allowances follow them.
 *
 * @param url the URL the TCK opens its clients with
 * @param lease the lease time it configures, if the backend has leases
 * @param session the session timeout it configures, if the backend has one
 * @param operation the operation timeout it configures, if it sets one
 */
public record TckTarget(
        String url, Optional<Duration> lease, Optional<Duration> session, Optional<Duration> operation) {

    /** The lease the TCK uses where the URL sets none. */
    public static final Duration SHORT_LEASE = Duration.ofSeconds(2);

    /** The ZooKeeper session timeout the TCK uses where the URL sets none (servers grant at least 2 ticks). */
    public static final Duration SHORT_SESSION = Duration.ofSeconds(4);

    /** Prepares {@code url}, telling {@code notes} which times it set. */
    public static TckTarget of(String url, PrintWriter notes) {
        String u = url;
        if (LockUrls.understands(u, "leaseMs")
                && LockUrls.parameter(u, "leaseMs").isEmpty()) {
            u = LockUrls.with(u, "leaseMs", Long.toString(SHORT_LEASE.toMillis()));
            notes.println("  (the URL sets no leaseMs: using leaseMs=" + SHORT_LEASE.toMillis()
                    + " so that the lease contracts take seconds; set it in the URL to check your own)");
        }
        if (LockUrls.understands(u, "sessionTimeoutMs")
                && LockUrls.parameter(u, "sessionTimeoutMs").isEmpty()) {
            u = LockUrls.with(u, "sessionTimeoutMs", Long.toString(SHORT_SESSION.toMillis()));
            notes.println("  (the URL sets no sessionTimeoutMs: using sessionTimeoutMs=" + SHORT_SESSION.toMillis()
                    + " so that the session contracts take seconds; set it in the URL to check your own)");
        }
        notes.flush();
        String ready = u;
        Optional<Duration> operation = millis(ready, "timeoutMs").or(() -> millis(ready, "connectionTimeoutMs"));
        return new TckTarget(ready, millis(ready, "leaseMs"), millis(ready, "sessionTimeoutMs"), operation);
    }

    private static Optional<Duration> millis(String url, String name) {
        try {
            return LockUrls.parameter(url, name).map(v -> Duration.ofMillis(Long.parseLong(v.trim())));
        } catch (NumberFormatException e) {
            return Optional.empty(); // the provider rejects it with a proper message when the URL is opened
        }
    }
}
