package org.locksmith.lock.mysql.internal;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.mysql.MySqlStrategy;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.LockBackend;
import org.locksmith.lock.spi.RenewalReport;

/**
 * The MySQL/MariaDB {@link LockBackend}: one strategy over one or more shards. Opening it detects each server's
 * flavour and creates the schema when allowed (its first I/O).
 */
public final class MySqlLockBackend implements LockBackend {
    private static final AtomicInteger CANCEL_THREADS = new AtomicInteger();

    private final MySqlSettings settings;
    private final List<Shard> shards;
    private final ShardRouter router;
    private final Strategy strategy;
    private final LeaseLocks leaseLocks;
    private final NamedLocks namedLocks;
    private final Set<LockFeature> features;
    private final String name;
    private final ExecutorService cancelExecutor;
    private final Set<SessionLease> sessions = ConcurrentHashMap.newKeySet();

    public MySqlLockBackend(MySqlSettings settings, List<Shard> shards) {
        if (shards.isEmpty()) {
            throw new IllegalArgumentException("a MySQL lock backend needs at least one data source");
        }
        this.settings = settings;
        this.shards = List.copyOf(shards);
        Fencing fencing = new Fencing(settings.quotedFenceTable());
        switch (settings.strategy()) {
            case ROW -> {
                strategy = new RowLocks(this, settings.quotedTable(), fencing);
                leaseLocks = null;
                namedLocks = null;
                features = EnumSet.of(
                        LockFeature.REENTRANT,
                        LockFeature.FENCING,
                        LockFeature.DURABLE_FENCING,
                        LockFeature.SESSION_BOUND,
                        LockFeature.BLOCKING_WAKEUP,
                        LockFeature.LOSS_DETECTION);
            }
            case LEASE -> {
                leaseLocks = new LeaseLocks(
                        this,
                        settings.quotedTable(),
                        TimeUnit.NANOSECONDS.toMicros(settings.leaseTime().toNanos()));
                strategy = leaseLocks;
                namedLocks = null;
                features = EnumSet.of(
                        LockFeature.REENTRANT,
                        LockFeature.FENCING,
                        LockFeature.DURABLE_FENCING,
                        LockFeature.LEASE_EXPIRY,
                        LockFeature.AUTO_RENEWAL,
                        LockFeature.LOSS_DETECTION);
            }
            case NAMED -> {
                namedLocks = new NamedLocks(this, settings.table(), fencing);
                strategy = namedLocks;
                leaseLocks = null;
                features = EnumSet.of(
                        LockFeature.REENTRANT,
                        LockFeature.FENCING,
                        LockFeature.DURABLE_FENCING,
                        LockFeature.SESSION_BOUND,
                        LockFeature.BLOCKING_WAKEUP,
                        LockFeature.LOSS_DETECTION);
            }
            default -> throw new IllegalArgumentException("unknown strategy " + settings.strategy());
        }
        this.name =
                "mysql-" + settings.strategy().urlValue() + (shards.size() > 1 ? "-" + shards.size() + "shards" : "");
        this.cancelExecutor =
                new ThreadPoolExecutor(0, Integer.MAX_VALUE, 10, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
                    Thread t = new Thread(r, "locksmith-mysql-cancel-" + CANCEL_THREADS.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        try {
            for (Shard shard : shards) {
                shard.initialise(
                        settings.table(),
                        settings.createSchema(),
                        cancelExecutor,
                        settings.timeout().toNanos());
            }
            ShardMap.agree(shards, settings.table(), settings.replaceShardMap());
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        this.router = new ShardRouter(shards);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Set<LockFeature> features() {
        return features;
    }

    @Override
    public Duration leaseTime() {
        return settings.strategy() == MySqlStrategy.LEASE ? settings.leaseTime() : Duration.ZERO;
    }

    @Override
    public Duration renewInterval() {
        return settings.strategy() == MySqlStrategy.LEASE
                ? settings.leaseTime().dividedBy(3)
                : settings.checkInterval();
    }

    /**
     * {@code row}/{@code named}: the {@code wait_timeout} set on every lock connection, so the core trusts a held
     * lease no longer than the server keeps a silent session; {@code lease}: none.
     */
    @Override
    public Duration sessionTimeout() {
        return settings.strategy() == MySqlStrategy.LEASE ? Duration.ZERO : settings.sessionTimeout();
    }

    @Override
    public BackendLease acquire(AcquireRequest request) throws InterruptedException {
        byte[] keyHash = KeyCodec.sha256(request.key());
        Shard shard = router.shardFor(keyHash);
        while (true) {
            try {
                return strategy.acquire(shard, keyHash, request);
            } catch (SessionLostException e) {
                // Not granted after all (the session died mid-grant; its connection was discarded): try again on a
                // fresh connection while the deadline allows.
                if (request.isTry()) {
                    throw e;
                }
                if (request.isCancelled() || request.remainingNanos() <= 0) {
                    return null;
                }
            }
        }
    }

    @Override
    public void renew(List<BackendLease> leases, RenewalReport report) {
        if (leaseLocks != null) {
            leaseLocks.renewAll(leases, report);
            return;
        }
        LockBackend.super.renew(leases, report);
    }

    @Override
    public void close() {
        cancelExecutor.shutdown();
        for (Shard shard : shards) {
            shard.close();
        }
        try {
            cancelExecutor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---- for the strategies

    Executor cancelExecutor() {
        return cancelExecutor;
    }

    long timeoutNanos() {
        return settings.timeout().toNanos();
    }

    /** The {@code wait_timeout} of lock connections, in seconds. */
    long sessionSeconds() {
        return settings.sessionSeconds();
    }

    int timeoutMillis() {
        return (int) Math.min(Integer.MAX_VALUE, settings.timeout().toMillis());
    }

    void remember(SessionLease lease) {
        sessions.add(lease);
    }

    void forget(SessionLease lease) {
        sessions.remove(lease);
    }

    // ---- for tests and operators

    public MySqlSettings settings() {
        return settings;
    }

    /** The shard that owns {@code key}. */
    public Shard shardFor(String key) {
        return router.shardFor(KeyCodec.sha256(key));
    }

    /**
     * The connections that hold this backend's locks right now ({@code row} and {@code named}); empty for
     * {@code lease}. Tests use them to find the sessions to kill.
     */
    public List<Connection> heldConnections() {
        List<Connection> result = new ArrayList<>();
        for (SessionLease lease : sessions) {
            result.add(lease.connection());
        }
        return result;
    }

    /** The {@code GET_LOCK} name of {@code key} ({@code named} strategy). */
    public String lockName(String key) {
        return KeyCodec.namedLockName(shardFor(key).database(), settings.table(), key);
    }

    @Override
    public String toString() {
        return name + shards;
    }
}
