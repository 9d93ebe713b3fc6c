package org.locksmith.lock.mysql.internal;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.mysql.MySqlStrategy;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.RenewalReport;

/**
 * How one {@link MySqlStrategy} holds locks, and everything the strategies differ in: the features a client
 * declares, the lease time, renew interval and session timeout the core works with, the connections a shard needs,
 * and the acquire and renewal themselves. {@link #of} is the one place that maps the public enum to its strategy;
 * an instance serves one backend's table and is immutable.
 */
public abstract sealed class Strategy permits LeaseLocks, SessionLocks {
    private final MySqlStrategy kind;

    Strategy(MySqlStrategy kind) {
        this.kind = kind;
    }

    /**
     * The strategy {@code kind} on {@code table} (validated by {@link MySqlSettings#validateTable}). Table names go
     * into SQL text backquoted, so a valid name that is also a reserved word ({@code order}, {@code lock}) still
     * works; a valid name cannot contain a backquote.
     *
     * @param leaseTime the lease time of the {@code lease} strategy
     */
    public static Strategy of(MySqlStrategy kind, String table, Duration leaseTime) {
        Fencing fencing = new Fencing("`" + table + "_fence`");
        return switch (kind) {
            case ROW -> new RowLocks("`" + table + "`", fencing);
            case LEASE -> new LeaseLocks("`" + table + "`", leaseTime);
            case NAMED -> new NamedLocks(table, fencing);
        };
    }

    /** The public name of this strategy. */
    final MySqlStrategy kind() {
        return kind;
    }

    /** What a client of this strategy guarantees. */
    abstract Set<LockFeature> features();

    /** How long a lease lives without renewal; zero for a strategy whose locks live as long as their session. */
    abstract Duration leaseTime();

    /** How often the core renews (or checks) held leases. */
    abstract Duration renewInterval(MySqlSettings settings);

    /**
     * How long the server keeps a silent session, so the core trusts a held lease no longer; zero for a strategy
     * whose locks outlive their session.
     */
    abstract Duration sessionTimeout(MySqlSettings settings);

    /**
     * Whether a lock is an open transaction: its connection runs in manual commit at READ COMMITTED (so no round
     * trip switches modes), and fencing tokens, which must commit on their own, are written on a connection beside
     * the holder's.
     */
    abstract boolean holdsTransaction();

    /** The role in the names of the pool a backend opens for this strategy's lock statements ({@code lock}, ...). */
    abstract String poolRole();

    /**
     * Acquires {@code request}'s key on the shard that owns it.
     *
     * @param context what this strategy may use of the backend that runs it
     * @return the lease, or null if not granted within the request's deadline or cancelled
     * @throws SessionLostException if the session died mid-grant (not granted; the backend may try again)
     */
    abstract BackendLease acquire(StrategyContext context, Shard shard, byte[] keyHash, AcquireRequest request)
            throws InterruptedException;

    /**
     * Renews or checks {@code leases} (all acquired by this strategy) and reports each one's outcome.
     *
     * @param context what this strategy may use of the backend that runs it
     */
    abstract void renew(StrategyContext context, List<BackendLease> leases, RenewalReport report);
}
