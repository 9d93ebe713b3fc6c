package org.locksmith.lock.mysql;

import java.util.Locale;

/**
 * How the MySQL backend holds a lock. All strategies work on MySQL 8.0+ and MariaDB 10.6+; one table must be used
 * by one strategy only.
 */
public enum MySqlStrategy {
    /**
     * A row per key in the lock table, held by an open transaction ({@code SELECT ... FOR UPDATE}) on a connection
     * dedicated to the lease: waiters queue in InnoDB (no polling), a dead client's locks free when the server drops
     * its connection, release is {@code COMMIT}. Session-bound, no lease expiry.
     */
    ROW,
    /**
     * A row per key with owner and an expiry computed by the server's clock; acquire, renew and release are single
     * conditional statements; waiters poll with jittered back-off. Survives connection loss; frees after the lease
     * time when the holder dies.
     */
    LEASE,
    /**
     * {@code GET_LOCK}/{@code RELEASE_LOCK} on a connection dedicated to the lease: session-bound, native waiting, no
     * lock table (fencing tokens still come from the fence table).
     */
    NAMED;

    /** The value of the {@code strategy} URL parameter. */
    public String urlValue() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * Parses a {@code strategy} URL parameter value.
     *
     * @throws IllegalArgumentException if it is not row, lease or named
     */
    public static MySqlStrategy parse(String text) {
        for (MySqlStrategy s : values()) {
            if (s.urlValue().equalsIgnoreCase(text.trim())) {
                return s;
            }
        }
        throw new IllegalArgumentException("MySQL lock strategy '" + text + "' is unknown: use row, lease or named");
    }
}
