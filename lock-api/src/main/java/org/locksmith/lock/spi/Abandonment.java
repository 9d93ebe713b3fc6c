package org.locksmith.lock.spi;

import java.util.Objects;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.internal.CoreLockClient;

/**
 * For test kits (the Locksmith TCK): abandons a holder inside one JVM, as a crashed or stalled process would, on any
 * backend built on the core ({@link org.locksmith.lock.Locks#client}). Not for applications: an abandoned lock stays
 * taken until its store frees it by itself.
 */
public final class Abandonment {
    private Abandonment() {}

    /**
     * Stops renewing {@code client}'s leases for good, as in a process whose renewer thread stalled: when this
     * returns, no renewal round is in flight and none will start. Its leases stay held and keep their validity
     * clock, so they run out; acquires, releases and every other call still reach the store.
     *
     * @return false, doing nothing, if {@code client} is not built on the core
     * @throws NullPointerException if client is null
     */
    public static boolean stopRenewals(LockClient client) {
        Objects.requireNonNull(client, "client");
        if (client instanceof CoreLockClient core) {
            core.stopRenewals();
            return true;
        }
        return false;
    }

    /**
     * Abandons {@code client} as a crash of its process would: its renewals stop, its waiters fail, and its backend's
     * connections are closed without releasing any lease, so the store frees its locks only by lease expiry or
     * session end. Its leases keep their validity clock (they turn invalid when their time runs out); the client is
     * closed afterwards.
     *
     * @return false, doing nothing, if {@code client} is not built on the core
     * @throws NullPointerException if client is null
     */
    public static boolean abandon(LockClient client) {
        Objects.requireNonNull(client, "client");
        if (client instanceof CoreLockClient core) {
            core.abandon();
            return true;
        }
        return false;
    }
}
