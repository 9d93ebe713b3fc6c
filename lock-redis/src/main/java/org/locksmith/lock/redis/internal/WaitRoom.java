package org.locksmith.lock.redis.internal;

import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.Permits;

/**
 * What a backend's waiters share: how many may block in {@code BLPOP} at once ({@link #blockingPermits}), how many
 * waiting acquires' attempts run at once ({@link #attemptPermits}), the threads that send cancel signals and
 * clean-up releases ({@link #cancelSignalSender}), and the wait connections. It hands out one {@link Waiter} per
 * waiting acquire.
 *
 * <p>{@code commands} serves every short command (acquire, release, renew, cancel signals) and {@code waits} the
 * blocking {@code BLPOP}s (see {@link WaitConnections}). They may be one client: then a local semaphore admits at most
 * half of its pool into {@code BLPOP}, so waiters never take the connections that releases and renewals need; with
 * two clients, up to the wait client's pool size. The others queue locally and re-try at the holder's lease end or
 * when admitted. Thread-safe.
 */
final class WaitRoom {
    /** Threads sending cancel signals: each signal is one short command, so a few serve many waiters. */
    private static final int CANCEL_THREADS = 4;
    /** {@link #sharedPermits}: guarded by itself. */
    private static final Map<Object, Permits> PERMITS_BY_POOL = new WeakHashMap<>();

    final RedisTopology commands;
    final RedisTopology waits;
    final ScriptRunner scripts;
    final WaitConnections connections;
    final String wakeTtlMillis;
    final int blockingLimit;
    final Permits blockingPermits;
    /** Waiting acquires' attempts in flight at once (see {@link #attemptPermits(RedisTopology, RedisTopology, int)}). */
    final Permits attemptPermits;

    final AtomicBoolean overflowLogged = new AtomicBoolean();
    /** See {@link #cancelSignalSender}. */
    final ThreadPoolExecutor canceller;

    WaitRoom(RedisTopology commands, RedisTopology waits, ScriptRunner scripts, RedisSettings settings) {
        this.commands = commands;
        this.waits = waits;
        this.scripts = scripts;
        this.wakeTtlMillis = Long.toString(settings.wakeTtlMillis());
        this.blockingLimit = blockingPermits(commands, waits, settings.maxBlockingWaiters());
        this.blockingPermits = sharedPermits(waits, blockingLimit);
        this.attemptPermits = new Permits(attemptPermits(commands, waits, blockingLimit));
        this.canceller = cancelSignalSender(blockingLimit);
        this.connections = new WaitConnections(waits, canceller);
    }

    /** A waiter for {@code request} on {@code keys}; the caller registers its {@link Waiter#cancel} action. */
    Waiter waiter(LockKeys keys, AcquireRequest request) {
        return new Waiter(this, keys, request);
    }

    /** Stops the cancel-signal threads once their queue is done. */
    void close() {
        canceller.shutdown();
    }

    /**
     * The threads that send cancel signals and the clean-up releases of acquires whose reply was lost, and give broken
     * wait connections back to their pool (see {@link WaitConnections}). Not the core's
     * threads, which call the cancel actions: a slow Redis must not delay renewals and other cancellations, so a
     * cancel action only queues its signal here and never runs it itself, and no waiter waits for its signal to be
     * sent. The queue is unbounded, so that no signal or clean-up is dropped under a burst of timed-out attempts; it
     * holds at most one signal per blocked waiter and one release per failed attempt.
     */
    static ThreadPoolExecutor cancelSignalSender(int blockingLimit) {
        AtomicInteger threads = new AtomicInteger();
        ThreadFactory factory = r -> {
            Thread t = new Thread(r, "locksmith-redis-cancel-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        int size = Math.min(CANCEL_THREADS, blockingLimit);
        ThreadPoolExecutor executor = new ThreadPoolExecutor(
                size,
                size,
                5,
                TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(),
                factory,
                new ThreadPoolExecutor.AbortPolicy());
        executor.allowCoreThreadTimeOut(true);
        return executor;
    }

    /**
     * How many threads may block in {@code BLPOP} at once. Each holds a connection of the wait client's pool for as
     * long as it blocks, so with one client shared by waits and short commands at most half of its pool may block:
     * releases, renewals, cancel signals and the application's own commands keep the other half, however many threads
     * wait. A separate wait client may be filled up to its pool size.
     */
    static int blockingPermits(RedisTopology commands, RedisTopology waits, int maxBlockingWaiters) {
        int capacity = waits.poolCapacity();
        if (waits != commands) {
            return Math.min(maxBlockingWaiters, capacity);
        }
        if (capacity < 2) {
            throw new IllegalArgumentException("A Redis client whose pool has " + capacity + " connection cannot be"
                    + " shared by lock waiters (each blocks one connection in BLPOP) and releases/renewals; give it a"
                    + " larger pool or pass a separate waitClient");
        }
        return Math.min(maxBlockingWaiters, capacity / 2);
    }

    /**
     * How many attempts of waiting acquires may be in flight at once: half of the command pool, less what blocking
     * waits may hold of it when they share it, so that releases, renewals and cancel signals always find a
     * connection, and ten thousand waiting threads queue fairly until their deadlines instead of failing the pool's
     * borrow after the client's timeout. No limit for a client whose pool is unknown.
     */
    static int attemptPermits(RedisTopology commands, RedisTopology waits, int blockingLimit) {
        int capacity = commands.poolCapacity();
        if (capacity == Integer.MAX_VALUE) {
            return Integer.MAX_VALUE;
        }
        int free = waits == commands ? capacity - blockingLimit : capacity;
        return Math.max(1, free / 2);
    }

    /**
     * The permits to block in {@code BLPOP} on the pool of {@code waits}, shared by every backend on that pool: two
     * lock clients built on one application client must not together park more of its connections than one may
     * (each holding its own half would leave none for releases and renewals). The first backend on a pool sets the
     * number; the pool is held weakly, so a closed client's entry goes with it.
     */
    private static Permits sharedPermits(RedisTopology waits, int permits) {
        synchronized (PERMITS_BY_POOL) {
            return PERMITS_BY_POOL.computeIfAbsent(waits.poolIdentity(), pool -> new Permits(permits));
        }
    }
}
