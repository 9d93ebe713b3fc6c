package org.locksmith.lock.mysql.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.jdbc.internal.FencedLease;
import org.locksmith.lock.jdbc.internal.Interrupts;
import org.locksmith.lock.mysql.MySqlStrategy;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.RenewalReport;

/**
 * The {@code lease} strategy: the row of a key carries its owner, an expiry computed by the server's clock
 * ({@code UTC_TIMESTAMP(6)}, never the client's) and the last fencing token. Acquire is one conditional
 * {@code UPDATE} (plus a race-free {@code INSERT IGNORE} the first time), renew one {@code UPDATE} for every lease
 * of a shard, release one {@code UPDATE}; each commits at once, so no connection is held between them. Waiters poll
 * with jittered exponential back-off.
 */
final class LeaseLocks extends Strategy {
    private static final long MIN_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    private static final long MAX_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(40);
    /** How often a waiter re-tries creating the key's row. */
    private static final long INSERT_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** MariaDB: the statement fails at once (error 1205) instead of waiting for a row lock another session holds. */
    private static final String NOWAIT = "SET STATEMENT innodb_lock_wait_timeout = 0 FOR ";

    private final Set<LockFeature> features = EnumSet.of(
            LockFeature.REENTRANT,
            LockFeature.FENCING,
            LockFeature.DURABLE_FENCING,
            LockFeature.LEASE_EXPIRY,
            LockFeature.AUTO_RENEWAL,
            LockFeature.LOSS_DETECTION);
    private final String table;
    private final Duration leaseTime;
    private final long leaseMicros;
    private final String take;
    private final String create;
    private final String release;

    LeaseLocks(String table, Duration leaseTime) {
        super(MySqlStrategy.LEASE);
        this.table = table;
        this.leaseTime = leaseTime;
        this.leaseMicros = TimeUnit.NANOSECONDS.toMicros(leaseTime.toNanos());
        String expiry = "UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND";
        String now = Fencing.NOW_MICROS;
        // The token rises by one per grant, never below the server clock in microseconds, so it keeps rising
        // even if an operator deletes the row; LAST_INSERT_ID(expr) returns it in the same round trip.
        this.take = "UPDATE " + table + " SET owner = ?, expires_at = " + expiry
                + ", token = LAST_INSERT_ID(GREATEST(token + 1, " + now + "))"
                + " WHERE key_hash = ? AND (owner IS NULL OR expires_at <= UTC_TIMESTAMP(6))";
        this.create = "INSERT IGNORE INTO " + table + " (key_hash, lock_key, owner, expires_at, token)"
                + " VALUES (?, ?, ?, " + expiry + ", LAST_INSERT_ID(" + now + "))";
        this.release = "UPDATE " + table + " SET owner = NULL, expires_at = '1970-01-01 00:00:01'"
                + " WHERE key_hash = ? AND owner = ? AND expires_at > UTC_TIMESTAMP(6)";
    }

    @Override
    Set<LockFeature> features() {
        return features;
    }

    @Override
    Duration leaseTime() {
        return leaseTime;
    }

    @Override
    Duration renewInterval(MySqlSettings settings) {
        return leaseTime.dividedBy(3);
    }

    /** None: a lease outlives the connections its statements ran on. */
    @Override
    Duration sessionTimeout(MySqlSettings settings) {
        return Duration.ZERO;
    }

    /** Each statement commits at once; no connection is held between them. */
    @Override
    boolean holdsTransaction() {
        return false;
    }

    @Override
    String poolRole() {
        return "lease";
    }

    @Override
    BackendLease acquire(StrategyContext context, Shard shard, byte[] keyHash, AcquireRequest request)
            throws InterruptedException {
        String owner = owner(request.ownerId());
        long backoff = MIN_BACKOFF_NANOS;
        long lastInsert = 0;
        boolean inserted = false;
        while (true) {
            long sentAt = System.nanoTime();
            // The row usually exists once a key has been used: create it on the first attempt, then at most once a
            // second (in case an operator deleted it), not on every poll.
            boolean mayInsert = !inserted || sentAt - lastInsert >= INSERT_INTERVAL_NANOS;
            if (mayInsert) {
                inserted = true;
                lastInsert = sentAt;
            }
            Long token = tryTake(context, shard, keyHash, request.key(), owner, mayInsert);
            if (token != null) {
                return new Lease(context, shard, keyHash, owner, token, sentAt);
            }
            if (request.isTry() || request.isCancelled()) {
                return null;
            }
            long remaining = request.remainingNanos();
            long sleep = Math.min(remaining, ThreadLocalRandom.current().nextLong(backoff / 2, backoff + 1));
            if (sleep > 0) {
                TimeUnit.NANOSECONDS.sleep(sleep); // interruptible: the core turns it into InterruptedException
            }
            if (request.isCancelled()) {
                return null;
            }
            backoff = Math.min(MAX_BACKOFF_NANOS, backoff * 2);
        }
    }

    private Long tryTake(
            StrategyContext context, Shard shard, byte[] keyHash, String key, String owner, boolean mayInsert) {
        // Another session may hold the row's lock (an operator's transaction, or a client creating the same key's
        // row): on MariaDB the attempt then fails at once (lock wait timeout 0 = NOWAIT) and counts as "not granted
        // now", so tryAcquire() never waits and a waiter keeps its deadline by polling.
        String prefix = shard.isMariaDb() ? NOWAIT : "";
        try (LentSession session = shard.borrowShort()) {
            Connection c = session.connection;
            c.setNetworkTimeout(Runnable::run, context.timeoutMillis());
            try (PreparedStatement ps = c.prepareStatement(prefix + take, Statement.RETURN_GENERATED_KEYS)) {
                ps.setString(1, owner);
                ps.setLong(2, leaseMicros);
                ps.setBytes(3, keyHash);
                if (ps.executeUpdate() == 1) {
                    return Fencing.generatedKey(ps);
                }
            }
            if (!mayInsert) {
                return null;
            }
            try (PreparedStatement ps = c.prepareStatement(prefix + create, Statement.RETURN_GENERATED_KEYS)) {
                ps.setBytes(1, keyHash);
                ps.setString(2, key);
                ps.setString(3, owner);
                ps.setLong(4, leaseMicros);
                if (ps.executeUpdate() == 1) {
                    return Fencing.generatedKey(ps);
                }
            }
            return null;
        } catch (SQLException e) {
            if (Sql.isLockNotGranted(e) || e.getErrorCode() == Sql.DEADLOCK) {
                return null;
            }
            if (Sql.isSessionGone(e)) {
                // The statement may have committed with its reply lost: free what this attempt may have taken
                // (owner-checked: the owner is this attempt's own), or the key would stay taken by nobody for the
                // lease time.
                takeBack(context, shard, keyHash, key, owner, e);
            }
            throw Sql.failure("could not lock key '" + key + "' on " + shard, e);
        }
    }

    /** Releases {@code owner}'s row if an ambiguous take left it; a failure is added to {@code failure}. */
    private void takeBack(
            StrategyContext context, Shard shard, byte[] keyHash, String key, String owner, SQLException failure) {
        try (LentSession session = shard.borrowShort()) {
            Connection c = session.connection;
            c.setNetworkTimeout(Runnable::run, context.timeoutMillis());
            try (PreparedStatement ps = c.prepareStatement(release)) {
                ps.setBytes(1, keyHash);
                ps.setString(2, owner);
                ps.executeUpdate();
            }
        } catch (SQLException | RuntimeException e) {
            failure.addSuppressed(new SQLException(
                    "and key '" + key + "' may stay taken until its lease time ends:"
                            + " the clean-up release failed too: " + e.getMessage(),
                    e));
        }
    }

    /** Renews every lease of one shard in one UPDATE; returns those no longer held. */
    List<BackendLease> renew(StrategyContext context, Shard shard, List<Lease> leases) {
        StringBuilder sql = new StringBuilder("UPDATE ")
                .append(table)
                .append(" SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND WHERE key_hash IN (");
        appendMarks(sql, leases.size()).append(") AND owner IN (");
        // Owner ids are unique per grant, so (key IN keys AND owner IN owners) matches exactly our rows.
        appendMarks(sql, leases.size()).append(") AND expires_at > UTC_TIMESTAMP(6)");
        try (LentSession session = shard.borrowShort()) {
            Connection c = session.connection;
            c.setNetworkTimeout(Runnable::run, context.timeoutMillis());
            int renewed;
            try (PreparedStatement ps = c.prepareStatement(sql.toString())) {
                int i = 1;
                ps.setLong(i++, leaseMicros);
                for (Lease l : leases) {
                    ps.setBytes(i++, l.keyHash);
                }
                for (Lease l : leases) {
                    ps.setString(i++, l.owner);
                }
                renewed = ps.executeUpdate();
            }
            if (renewed == leases.size()) {
                return List.of();
            }
            // Some were lost: find which (a second round trip, only in that rare case).
            StringBuilder held =
                    new StringBuilder("SELECT owner FROM ").append(table).append(" WHERE key_hash IN (");
            appendMarks(held, leases.size()).append(") AND owner IN (");
            appendMarks(held, leases.size()).append(") AND expires_at > UTC_TIMESTAMP(6)");
            Set<String> still = new HashSet<>();
            try (PreparedStatement ps = c.prepareStatement(held.toString())) {
                int i = 1;
                for (Lease l : leases) {
                    ps.setBytes(i++, l.keyHash);
                }
                for (Lease l : leases) {
                    ps.setString(i++, l.owner);
                }
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        still.add(rs.getString(1));
                    }
                }
            }
            List<BackendLease> lost = new ArrayList<>();
            for (Lease l : leases) {
                if (!still.contains(l.owner)) {
                    lost.add(l);
                }
            }
            return lost;
        } catch (SQLException e) {
            throw Sql.failure("could not renew " + leases.size() + " lease(s) on " + shard, e);
        }
    }

    /**
     * Renews the leases of each shard in one UPDATE, shards in parallel, and reports each shard's leases as soon as
     * it answered; a shard that fails or stalls makes only its own leases unconfirmed.
     */
    @Override
    void renew(StrategyContext context, List<BackendLease> leases, RenewalReport report) {
        Map<Shard, List<Lease>> byShard = new LinkedHashMap<>();
        for (BackendLease l : leases) {
            Lease lease = (Lease) l;
            byShard.computeIfAbsent(lease.shard, s -> new ArrayList<>()).add(lease);
        }
        context.perShard(byShard, (shard, shardLeases) -> {
            long sentAt = System.nanoTime();
            List<BackendLease> lost;
            try {
                lost = renew(context, shard, shardLeases);
            } catch (RuntimeException failure) {
                shardLeases.forEach(l -> report.unconfirmed(l, failure));
                return;
            }
            for (Lease l : shardLeases) {
                if (lost.contains(l)) {
                    report.lost(l, "its row is gone or expired on " + shard);
                } else {
                    report.renewed(l, sentAt);
                }
            }
        });
    }

    private static StringBuilder appendMarks(StringBuilder sql, int n) {
        for (int i = 0; i < n; i++) {
            sql.append(i == 0 ? "?" : ",?");
        }
        return sql;
    }

    /** Owner ids are ASCII (client id and counter); an unexpectedly long one is hashed to fit the column. */
    private static String owner(String ownerId) {
        if (ownerId.length() <= 128 && ownerId.chars().allMatch(ch -> ch >= 0x20 && ch < 0x7f)) {
            return ownerId;
        }
        StringBuilder hex = new StringBuilder(64);
        for (byte b : KeyCodec.sha256(ownerId)) {
            hex.append(String.format(Locale.ROOT, "%02x", b));
        }
        return hex.toString();
    }

    /** A lease row owned by one grant. */
    final class Lease extends FencedLease {
        private final StrategyContext context;
        final Shard shard;
        final byte[] keyHash;
        final String owner;

        Lease(StrategyContext context, Shard shard, byte[] keyHash, String owner, long token, long confirmedAtNanos) {
            super(token, confirmedAtNanos);
            this.context = context;
            this.shard = shard;
            this.keyHash = keyHash;
            this.owner = owner;
        }

        @Override
        public boolean renew() {
            return LeaseLocks.this.renew(context, shard, List.of(this)).isEmpty();
        }

        @Override
        public boolean release() {
            return Interrupts.uninterrupted(this::releaseNow);
        }

        private boolean releaseNow() {
            try (LentSession session = shard.borrowShort()) {
                Connection c = session.connection;
                c.setNetworkTimeout(Runnable::run, context.timeoutMillis());
                try (PreparedStatement ps = c.prepareStatement(release)) {
                    ps.setBytes(1, keyHash);
                    ps.setString(2, owner);
                    return ps.executeUpdate() == 1;
                }
            } catch (SQLException e) {
                throw Sql.failure("could not release a lease on " + shard, e);
            }
        }
    }
}
