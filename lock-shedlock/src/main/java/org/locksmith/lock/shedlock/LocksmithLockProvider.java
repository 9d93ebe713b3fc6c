package org.locksmith.lock.shedlock;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.locksmith.lock.DistributedLock;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;

/**
 * A ShedLock {@link net.javacrumbs.shedlock.core.LockProvider} backed by a Locksmith {@link LockClient}, so that
 * {@code @SchedulerLock} jobs (and {@code LockingTaskExecutor} tasks) run under any Locksmith backend:
 *
 * <pre>{@code
 * @Bean
 * LockProvider lockProvider(LockClient locks) {
 *     return new LocksmithLockProvider(locks);   // keys "shedlock:<lock name>"
 * }
 * }</pre>
 *
 * <p><b>Mapping.</b> A ShedLock lock named {@code n} is the Locksmith key {@code keyPrefix + n}. {@link #lock} makes
 * one attempt on the calling thread that never waits on another holder ({@link DistributedLock#tryAcquireDetached()})
 * and returns empty when another node (or another job of this node) holds the key.
 *
 * <p><b>Who owns the lease.</b> A ShedLock lock outlives its job: it is kept after {@link SimpleLock#unlock()} until
 * {@code lockAtLeastFor} has passed, and freed at {@code lockAtMostFor} even if nobody unlocks it. So each granted
 * lock is a detached lease (one that any thread may release, once) and its deadlines wait on this provider's one
 * timer thread (a daemon named {@code locksmith-shedlock-timer-N}, started with the first lock): no thread per held
 * lock. The lease is released at the first of:
 *
 * <ul>
 *   <li>{@code unlock()} was called and {@code lockAtLeastFor} (from the configuration's creation time) has passed;
 *       {@code unlock()} called after that point returns once the store has been told, so the lock is free when it
 *       returns; called before it, it returns at once and the lock frees at {@code lockAtLeastFor};
 *   <li>{@code lockAtMostFor} has passed, even if the job still runs, as ShedLock specifies; a later {@code unlock()}
 *       then does nothing;
 *   <li>the lease was lost in the store (where the client declares {@link LockFeature#LOSS_DETECTION});
 *   <li>this provider is closed.
 * </ul>
 *
 * {@code unlock()} may be called from any thread, once. While held, Locksmith renews the lease in the background, so
 * a job longer than the backend's lease time keeps its lock until {@code lockAtMostFor}.
 *
 * <p><b>Crashed nodes.</b> The lock of a node that dies frees when the store notices: after the client's lease time
 * (leased backends such as Redis, {@code leaseMs}) or when its session ends (session-bound backends such as MySQL
 * {@code row}). ShedLock frees it at {@code lockAtMostFor}; to keep ShedLock's bound exactly, configure the client's
 * lease or session timeout no longer than the shortest {@code lockAtMostFor} of the jobs. A client that declares
 * neither {@link LockFeature#LEASE_EXPIRY} nor {@link LockFeature#SESSION_BOUND} would never free a crashed node's
 * lock and is refused.
 *
 * <p><b>Extension.</b> {@link SimpleLock#extend(Duration, Duration)} is supported ({@link ExtensibleLockProvider}),
 * also through ShedLock's {@code LockExtender}: it moves both deadlines to the given durations from now, without a
 * round trip (the lease is already renewed in the background). It returns empty when the lock is no longer held
 * ({@code lockAtMostFor} passed, lease lost, provider closed); the lock is free in the store when it does.
 *
 * <p><b>Fencing and loss.</b> While a job runs, {@link #currentLease()} on the job's thread returns its lock's lease:
 * {@link LockLease#fencingToken()} to pass to the resource the job writes, {@link LockLease#isValid()} to check
 * before a step that must be protected, and {@link LockLease#onLost} (where the client declares {@link
 * LockFeature#LOSS_DETECTION}) to be told when the lock is lost in the store or freed at {@code lockAtMostFor} while
 * the job still runs.
 *
 * <p><b>Errors.</b> A store failure in {@link #lock} is thrown as Locksmith's {@link
 * org.locksmith.lock.LockBackendException} (ShedLock's executors propagate it and do not run the job); a lock name
 * that makes an invalid key throws {@link IllegalArgumentException}; {@link #lock} after {@link #close()}, or on a
 * closed client, throws {@link IllegalStateException}. If the calling thread is interrupted when its attempt
 * returns, {@link #lock} returns empty with the interrupt status set, and nothing stays held.
 *
 * <p>This class is thread-safe. Closing it does not close the client.
 */
public final class LocksmithLockProvider implements ExtensibleLockProvider, AutoCloseable {

    /** The prefix of the Locksmith key of every ShedLock lock name, unless another is given. */
    public static final String DEFAULT_KEY_PREFIX = "shedlock:";

    private static final ThreadLocal<Deque<HeldLock>> CURRENT = new ThreadLocal<>();
    private static final AtomicInteger TIMER_THREADS = new AtomicInteger();

    private final LockClient client;
    private final String keyPrefix;
    private final ScheduledThreadPoolExecutor timer;
    private final Set<HeldLock> held = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /**
     * A provider whose lock named {@code n} is the key {@code "shedlock:" + n} of {@code client}.
     *
     * @param client the client whose locks this provider takes; it stays the caller's to close
     * @throws NullPointerException if client is null
     * @throws IllegalArgumentException if the client declares neither {@link LockFeature#LEASE_EXPIRY} nor {@link
     *     LockFeature#SESSION_BOUND}
     */
    public LocksmithLockProvider(LockClient client) {
        this(client, DEFAULT_KEY_PREFIX);
    }

    /**
     * A provider whose lock named {@code n} is the key {@code keyPrefix + n} of {@code client}.
     *
     * @param client the client whose locks this provider takes; it stays the caller's to close
     * @param keyPrefix may be empty, to share keys with code that locks them through the client directly
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the client declares neither {@link LockFeature#LEASE_EXPIRY} nor {@link
     *     LockFeature#SESSION_BOUND}
     */
    public LocksmithLockProvider(LockClient client, String keyPrefix) {
        this.client = Objects.requireNonNull(client, "client");
        this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
        Set<LockFeature> features = client.features();
        if (!features.contains(LockFeature.LEASE_EXPIRY) && !features.contains(LockFeature.SESSION_BOUND)) {
            throw new IllegalArgumentException("Lock client '" + client.backend()
                    + "' declares neither LEASE_EXPIRY nor SESSION_BOUND: the lock of a crashed node would never"
                    + " free, which breaks ShedLock's lockAtMostFor. Use a leased or session-bound backend.");
        }
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "locksmith-shedlock-timer-" + TIMER_THREADS.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        // Every extend and early unlock moves a deadline: drop the cancelled one at once rather than at its time.
        timer.setRemoveOnCancelPolicy(true);
        // Close releases every lock itself; the deadlines still waiting then have nothing left to do.
        timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /**
     * Makes one attempt to take the lock of {@code lockConfiguration}, never waiting on another holder.
     *
     * @return the lock, held until it is unlocked and {@code lockAtLeastFor} has passed, or {@code lockAtMostFor}
     *     has passed (a lock whose {@code lockAtMostFor} is over when it is granted is freed at once); empty if
     *     another owner holds it, or if the thread was interrupted meanwhile (its interrupt status is then set)
     * @throws org.locksmith.lock.LockBackendException if the store failed or was unreachable
     * @throws IllegalArgumentException if the key made from the lock's name is too long or not well-formed UTF-16
     * @throws IllegalStateException if this provider or its client is closed
     * @throws NullPointerException if lockConfiguration is null
     */
    @Override
    public Optional<SimpleLock> lock(LockConfiguration lockConfiguration) {
        Objects.requireNonNull(lockConfiguration, "lockConfiguration");
        if (closed) {
            throw new IllegalStateException("LocksmithLockProvider is closed");
        }
        Instant now = ClockProvider.now();
        long nowNanos = System.nanoTime();
        Optional<LockLease> granted =
                client.lock(keyPrefix + lockConfiguration.getName()).tryAcquireDetached();
        if (granted.isEmpty()) {
            return Optional.empty();
        }
        HeldLock lock = new HeldLock(
                granted.get(),
                timer,
                nowNanos + nonNegative(Duration.between(now, lockConfiguration.getLockAtMostUntil())),
                nowNanos + nonNegative(Duration.between(now, lockConfiguration.getLockAtLeastUntil())),
                held::remove);
        held.add(lock);
        // Seen here or by close(), which ends every lock in held: a lock granted while closing never stays held.
        if (closed) {
            lock.end();
            throw new IllegalStateException("LocksmithLockProvider is closed");
        }
        boolean started;
        try {
            started = lock.start(client.features().contains(LockFeature.LOSS_DETECTION));
        } catch (RejectedExecutionException e) {
            throw new IllegalStateException("LocksmithLockProvider is closed", e);
        }
        // The job must not run under a lock that ended before it was handed over (provider closed, lost at once);
        // nor, as before the attempt moved to this thread, when the caller was interrupted meanwhile.
        if (!started || Thread.currentThread().isInterrupted()) {
            lock.end();
            return Optional.empty();
        }
        Deque<HeldLock> current = CURRENT.get();
        if (current == null) {
            current = new ArrayDeque<>();
            CURRENT.set(current);
        }
        current.push(lock);
        return Optional.of(new LocksmithSimpleLock(lockConfiguration, lock));
    }

    /**
     * The lease of the innermost ShedLock lock that this provider (any instance) granted on the current thread and
     * that was not unlocked yet: while a job runs under ShedLock, its own lock's lease. No I/O.
     *
     * <p>The lease is held by the provider, not by the job: its {@link LockLease#release()} throws {@link
     * IllegalMonitorStateException} (unlock through ShedLock), {@link LockLease#fencingToken()} follows {@link
     * LockFeature#FENCING} as usual, {@link LockLease#isValid()} turns false once the lock is lost or freed at {@code
     * lockAtMostFor}, and {@link LockLease#onLost} listeners (which need {@link LockFeature#LOSS_DETECTION}) are
     * called once in either case.
     *
     * <p>Take it at the start of the job to watch it: once the lock is unlocked or freed in the store (at {@code
     * lockAtMostFor}, on loss, on close) it is no longer current, and this returns the next outer lock's lease, or
     * empty.
     *
     * @return the lease, or empty if no lock of this provider is current on this thread
     */
    public static Optional<LockLease> currentLease() {
        Deque<HeldLock> current = CURRENT.get();
        if (current == null) {
            return Optional.empty();
        }
        // Locks unlocked from another thread, or freed without an unlock, stay in the stack until this prunes them.
        current.removeIf(lock -> !lock.current());
        if (current.isEmpty()) {
            CURRENT.remove();
            return Optional.empty();
        }
        return Optional.of(current.peek().lease());
    }

    /**
     * Releases every lock this provider still holds, at once (also those kept for {@code lockAtLeastFor}), on the
     * calling thread, and stops its timer thread, waiting a bounded time for a release it is making. Later {@link
     * #lock} calls throw {@link IllegalStateException}. Does not close the client. Idempotent.
     */
    @Override
    public void close() {
        closed = true;
        for (HeldLock lock : held) {
            lock.end();
        }
        timer.shutdown(); // not shutdownNow: a release the timer is making is let finish, not interrupted
        try {
            if (!timer.awaitTermination(HeldLock.RELEASE_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                HeldLock.LOG.log(
                        System.Logger.Level.WARNING,
                        "LocksmithLockProvider.close: its timer thread did not finish releasing within "
                                + HeldLock.RELEASE_WAIT + "; the store frees its lock by itself");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static void forget(HeldLock lock) {
        Deque<HeldLock> current = CURRENT.get();
        if (current == null) {
            return;
        }
        for (Iterator<HeldLock> it = current.iterator(); it.hasNext(); ) {
            if (it.next() == lock) {
                it.remove();
                break;
            }
        }
        if (current.isEmpty()) {
            CURRENT.remove();
        }
    }

    private static long nonNegative(Duration d) {
        return d.isNegative() ? 0 : d.toNanos();
    }
}
