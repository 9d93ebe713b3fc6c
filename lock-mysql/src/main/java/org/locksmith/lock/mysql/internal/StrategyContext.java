package org.locksmith.lock.mysql.internal;

import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Everything a {@link Strategy} (and the leases it grants) uses of the backend that runs it, and nothing more: the
 * backend's timeouts, its daemon executor, the bookkeeping of held session leases, and running work per shard in
 * parallel. The backend hands one context to every {@code acquire} and {@code renew}, so that a strategy never
 * sees the backend itself and the arrows point one way only: backend to strategy to shard.
 *
 * <p>Contract: the values never change over the backend's life; every method is thread-safe; after the backend
 * closed, the executor rejects new work (callers run it on their own thread instead) and {@link #remember} schedules
 * no more sweeps.
 */
interface StrategyContext {

    /**
     * The backend's daemon executor: statement cancels ({@code KILL QUERY}, through {@link org.locksmith.lock.jdbc.internal.Canceller}), borrows
     * from an application's pool, and the parallel work of {@link #inParallel}. Unbounded; rejects work once closed.
     */
    Executor cancelExecutor();

    /** The bound of one store call ({@code timeoutMs}), in nanoseconds. */
    long timeoutNanos();

    /** The same bound in milliseconds, capped to an int: the network timeout of a connection's statements. */
    int timeoutMillis();

    /** The {@code wait_timeout} of lock connections, in seconds ({@code row}, {@code named}). */
    long sessionSeconds();

    /** How long after a server starts it grants no session lock ({@code row}, {@code named}); 0: no hold-off. */
    long restartHoldOffNanos();

    /**
     * A session lease was granted: the backend keeps it (for its sweep of leases no check confirmed within the
     * session timeout, and for tests that kill its session) until {@link #forget}.
     */
    void remember(SessionLease lease);

    /** A session lease gave its connection back (released, found lost, run out): the backend no longer keeps it. */
    void forget(SessionLease lease);

    /**
     * Runs {@code work} for each item in parallel (all but one on the backend's daemon threads, the first on the
     * caller's), and returns once every item's work has ended, so that a stalled item delays no other.
     */
    <T> void inParallel(List<T> items, Consumer<T> work);

    /**
     * Runs {@code work} for each shard's items, shards in parallel (all but one on the backend's daemon threads,
     * one on the caller's), and returns once every shard's work has ended, so that a stalled shard delays
     * only its own items.
     */
    <T> void perShard(Map<Shard, List<T>> byShard, BiConsumer<Shard, List<T>> work);
}
