package org.locksmith.lock.mysql.internal;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.jdbc.internal.Parallel;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.LockBackend;
import org.locksmith.lock.spi.RenewalReport;

/**
 * The MySQL/MariaDB {@link LockBackend}: one strategy over one or more shards. Opening it detects each server's
 * flavour and creates the schema when allowed (its first I/O).
 */
public final class MySqlLockBackend implements LockBackend {
    private static final System.Logger LOG = System.getLogger(MySqlLockBackend.class.getName());
    private static final AtomicInteger CANCEL_THREADS = new AtomicInteger();

    private final MySqlSettings settings;
    private final List<Shard> shards;
    private final ShardRouter router;
    private final Strategy strategy;
    private final String name;
    private final ExecutorService cancelExecutor;
    private final Set<SessionLease> sessions = ConcurrentHashMap.newKeySet();
    /** Runs {@link #sweep}; its thread ends when idle. */
    private final ScheduledThreadPoolExecutor sweeper;

    private final AtomicBoolean sweeping = new AtomicBoolean();
    /** All that {@link #strategy} may use of this backend. */
    private final StrategyContext context = new Context();

    /**
     * Opens the backend: connects to every shard, creates the schema if allowed and checks that the shards agree on
     * their map.
     *
     * @param strategy the settings' strategy, from {@link Strategy#of} with their table and lease time
     */
    public MySqlLockBackend(MySqlSettings settings, Strategy strategy, List<Shard> shards) {
        if (shards.isEmpty()) {
            throw new IllegalArgumentException("a MySQL lock backend needs at least one data source");
        }
        this.settings = settings;
        this.shards = List.copyOf(shards);
        this.strategy = strategy;
        this.name = "mysql-" + strategy.kind().urlValue() + (shards.size() > 1 ? "-" + shards.size() + "shards" : "");
        this.sweeper = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "locksmith-mysql-sweep-" + CANCEL_THREADS.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        sweeper.setKeepAliveTime(10, TimeUnit.SECONDS);
        sweeper.allowCoreThreadTimeOut(true);
        sweeper.setRemoveOnCancelPolicy(true);
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
        return strategy.features();
    }

    @Override
    public Duration leaseTime() {
        return strategy.leaseTime();
    }

    @Override
    public Duration renewInterval() {
        return strategy.renewInterval(settings);
    }

    /**
     * {@code row}/{@code named}: the {@code wait_timeout} set on every lock connection, so the core trusts a held
     * lease no longer than the server keeps a silent session; {@code lease}: none.
     */
    @Override
    public Duration sessionTimeout() {
        return strategy.sessionTimeout(settings);
    }

    /**
     * An interrupt reaches a wait through the request's cancel action (KILL QUERY). On a virtual thread it also
     * closes the connection's socket, and with the status set HikariCP lends no connection: so a try, which does not
     * answer interrupts, and {@code Lock.lock()}, which waits through them, run with the status set aside and get it
     * back at the end; an interruptible wait whose I/O an interrupt broke ends as cancelled. A broken connection is
     * a dead session, which holds nothing.
     */
    @Override
    public BackendLease acquire(AcquireRequest request) throws InterruptedException {
        byte[] keyHash = KeyCodec.sha256(request.key());
        Shard shard = router.shardFor(keyHash);
        boolean waitsThroughInterrupts = request.isTry() || !request.isInterruptible();
        boolean setAside = waitsThroughInterrupts && Thread.interrupted();
        int interruptedTries = 0;
        try {
            while (true) {
                try {
                    return strategy.acquire(context, shard, keyHash, request);
                } catch (SessionLostException e) {
                    // Not granted after all (the session died mid-grant; its connection was discarded): try again
                    // on a fresh connection while the deadline allows.
                    if (waitsThroughInterrupts && interruptedMidCall(request, interruptedTries++)) {
                        setAside = true;
                        continue;
                    }
                    if (request.isTry()) {
                        throw e;
                    }
                    if (request.isCancelled() || request.remainingNanos() <= 0) {
                        return null;
                    }
                } catch (LockBackendException e) {
                    if (!Thread.currentThread().isInterrupted()) {
                        throw e;
                    }
                    if (!waitsThroughInterrupts) {
                        return null; // cancelled by the interrupt: the core throws InterruptedException
                    }
                    if (!interruptedMidCall(request, interruptedTries++)) {
                        throw e;
                    }
                    setAside = true;
                }
            }
        } finally {
            if (setAside) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * For a request that waits through interrupts, whose call an interrupt broke: clears the status (the caller sets
     * it again at the end) and says whether to try again; a few times at most, so that a stream of interrupts cannot
     * keep a try going.
     */
    private static boolean interruptedMidCall(AcquireRequest request, int before) {
        if (!Thread.currentThread().isInterrupted() || before >= 3) {
            return false;
        }
        Thread.interrupted();
        return request.isTry() || request.remainingNanos() > 0;
    }

    @Override
    public void renew(List<BackendLease> leases, RenewalReport report) {
        strategy.renew(context, leases, report);
    }

    @Override
    public void close() {
        sweeper.shutdownNow();
        cancelExecutor.shutdown();
        try {
            // The KILLs of sessions given up on (Shard.discard) go through the pools closed next: let them end first,
            // each within the timeout (its borrow).
            cancelExecutor.awaitTermination(settings.timeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Shard shard : shards) {
            shard.close();
        }
        try {
            sweeper.awaitTermination(5, TimeUnit.SECONDS);
            cancelExecutor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Gives back the connections of held sessions that no check has confirmed for the session timeout: their
     * leases have run out (a paused process, checks that never reached them), and the core no longer checks a
     * lease it knows lost, so only its owner's release() would give the connection back. Runs every check interval
     * on a daemon thread while any session is held.
     */
    private void sweep() {
        long now = System.nanoTime();
        long sessionNanos = settings.sessionTimeout().toNanos();
        for (SessionLease lease : sessions) {
            if (lease.giveBackIfRunOut(now, sessionNanos)) {
                LOG.log(
                        System.Logger.Level.INFO,
                        "Gave back the connection of a lock on " + lease.shard + " that no check confirmed for "
                                + settings.sessionTimeout().toMillis() + " ms (sessionTimeoutMs): its lease ran out");
            }
        }
        sweeping.set(false);
        if (!sessions.isEmpty() && sweeping.compareAndSet(false, true)) {
            scheduleSweep();
        }
    }

    private void scheduleSweep() {
        try {
            sweeper.schedule(this::sweep, settings.checkInterval().toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closed) {
            sweeping.set(false);
        }
    }

    /** What the strategy and its leases use of this backend; they see nothing else of it. */
    private final class Context implements StrategyContext {

        @Override
        public Executor cancelExecutor() {
            return cancelExecutor;
        }

        @Override
        public long timeoutNanos() {
            return settings.timeout().toNanos();
        }

        @Override
        public long restartHoldOffNanos() {
            return settings.restartHoldOff().toNanos();
        }

        @Override
        public long sessionSeconds() {
            return settings.sessionSeconds();
        }

        @Override
        public int timeoutMillis() {
            return (int) Math.min(Integer.MAX_VALUE, settings.timeout().toMillis());
        }

        @Override
        public void remember(SessionLease lease) {
            sessions.add(lease);
            if (sweeping.compareAndSet(false, true)) {
                scheduleSweep();
            }
        }

        @Override
        public void forget(SessionLease lease) {
            sessions.remove(lease);
        }

        @Override
        public <T> void perShard(Map<Shard, List<T>> byShard, BiConsumer<Shard, List<T>> work) {
            inParallel(new ArrayList<>(byShard.entrySet()), e -> work.accept(e.getKey(), e.getValue()));
        }

        @Override
        public <T> void inParallel(List<T> items, Consumer<T> work) {
            Parallel.forEach(
                    items,
                    work,
                    cancelExecutor,
                    failure -> LOG.log(System.Logger.Level.WARNING, "A renewal failed: " + failure, failure));
        }
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
