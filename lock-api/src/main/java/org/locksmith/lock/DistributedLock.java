package org.locksmith.lock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.Lock;

/**
 * One key as seen through one {@link LockClient}. Obtaining it does no I/O; it is thread-safe and cheap, so there
 * is no need to cache it.
 *
 * <p>The owner of a lease is the pair (client, thread): a lease is held by the thread that acquired it, as with
 * {@link java.util.concurrent.locks.ReentrantLock}. Another thread of the same client contends for the key like
 * another process would. When the client declares {@link LockFeature#REENTRANT}, an acquire by the thread that
 * already holds the key returns the same {@link LockLease} with its {@link LockLease#holdCount()} raised by one,
 * without any round trip to the store; each acquire then needs its own release.
 *
 * <p>Without {@link LockFeature#REENTRANT}, an acquire by the thread that already holds the key throws {@link
 * IllegalStateException} (it would otherwise wait for itself forever), and the held lease is unaffected.
 *
 * <p>Every method that declares {@link InterruptedException} responds to interruption: it throws it promptly,
 * leaves nothing held and nothing queued in the store, and clears the interrupt status, as {@link
 * Lock#lockInterruptibly()} does. An interrupt already pending when it is called is honoured the same way, without
 * any I/O, also on re-entry and with a zero timeout. A lease granted in the same instant as the interrupt is
 * released before the exception is thrown. {@link #tryAcquire()} does not look at the interrupt status, as {@link
 * Lock#tryLock()} does not.
 *
 * <p><b>Detached leases.</b> {@link #acquireDetached}, {@link #tryAcquireDetached} and {@link #acquireAsync} grant a
 * lease that belongs to itself, not to a thread: code on futures, reactive pipelines or virtual threads may acquire
 * on one thread and release on another. Any thread may release it, exactly once: it has one hold, is never
 * re-entered, and a second release throws {@link IllegalMonitorStateException}. Every other acquire of the key
 * through this client, a detached one or one by the thread that acquired it, contends with it as another process
 * would. Otherwise a detached lease is a lease like any other: fencing token, validity, loss listeners, renewal,
 * and release when the client closes. Nothing releases it but its holder and {@link LockClient#close()}: the core
 * cannot tell that a detached lease was abandoned (a thread-owned one it releases when its thread ends).
 */
public interface DistributedLock {

    /** The key this lock guards. */
    String key();

    /**
     * Acquires the lock, waiting at most {@code timeout}.
     *
     * @param timeout how long to wait; zero means one attempt that does not wait for the holder
     * @return the lease, valid now
     * @throws LockTimeoutException if the lock was not granted within the timeout; a timed-out wait gives up no
     *     earlier than asked and leaves nothing behind in the store
     * @throws InterruptedException if the thread is interrupted before (the status was already set: no I/O, also on
     *     re-entry) or while waiting; the interrupt status is cleared
     * @throws LockBackendException if the store failed or was unreachable
     * @throws LockLostException if the thread re-enters a lease that was lost, or whose time ran out, and that is
     *     not yet released; the hold count is unchanged, and the lease still needs its releases
     * @throws IllegalArgumentException if timeout is negative
     * @throws NullPointerException if timeout is null
     * @throws IllegalStateException if the client is, or becomes, closed; or if the thread already holds the key
     *     and the client does not declare {@link LockFeature#REENTRANT}
     */
    LockLease acquire(Duration timeout) throws InterruptedException;

    /**
     * Acquires the lock, waiting for as long as it takes. Same contract as {@link #acquire(Duration)} with no
     * deadline.
     */
    LockLease acquire() throws InterruptedException;

    /**
     * One attempt that never waits on the holder (it does one round trip to the store, or none on re-entry). Like
     * {@link Lock#tryLock()}, it neither checks nor clears the interrupt status.
     *
     * @return the lease, or empty if another owner holds the lock
     * @throws LockBackendException if the store failed or was unreachable
     * @throws LockLostException if the thread re-enters a lease that was lost, or whose time ran out, and that is
     *     not yet released
     * @throws IllegalStateException if the client is closed; or if the thread already holds the key and the client
     *     does not declare {@link LockFeature#REENTRANT}
     */
    Optional<LockLease> tryAcquire();

    /**
     * Acquires the lock, waiting at most {@code timeout}, and reports a timeout as an empty result instead of an
     * exception. Otherwise the same contract as {@link #acquire(Duration)}.
     */
    Optional<LockLease> tryAcquire(Duration timeout) throws InterruptedException;

    /**
     * Acquires the lock for a detached lease (see the class comment: no owner thread, one hold, releasable once from
     * any thread), waiting at most {@code timeout}. Otherwise the same contract as {@link #acquire(Duration)}; the
     * current thread's own lease of the key, if any, is not re-entered but waited for.
     */
    LockLease acquireDetached(Duration timeout) throws InterruptedException;

    /**
     * One attempt for a detached lease that never waits on the holder. Otherwise the same contract as {@link
     * #tryAcquire()}.
     */
    Optional<LockLease> tryAcquireDetached();

    /**
     * Acquires the lock for a detached lease without blocking the caller: the returned future completes with the
     * lease, or exceptionally with {@link LockTimeoutException} when {@code timeout} ran out (zero: one attempt), with
     * {@link LockBackendException} when the store failed, or with {@link IllegalStateException} when the client was
     * closed meanwhile. Same as {@link #acquireAsync(Duration, Executor)} with completion on the thread that waited.
     *
     * @throws IllegalArgumentException if timeout is negative
     * @throws NullPointerException if timeout is null
     * @throws IllegalStateException if the client is closed
     */
    CompletableFuture<LockLease> acquireAsync(Duration timeout);

    /**
     * Acquires the lock for a detached lease without blocking the caller, and completes the returned future on
     * {@code executor} (so that dependent stages without an executor of their own run there).
     *
     * <p>The wait runs on a virtual thread where the runtime has them (Java 21 and later), so that waiting does not
     * park a platform thread where the backend's wait does not pin its carrier; on Java 17, on a daemon thread of the
     * client for each pending acquire. {@link CompletableFuture#cancel cancel} ends the wait as an interrupt does:
     * nothing is left held or queued in the store, and a lease granted in the same instant is released. A lease
     * that finds the future already completed (cancelled, or completed by the caller) is released, and so is one
     * whose completion {@code executor} rejects (the future then fails with the {@link
     * java.util.concurrent.RejectedExecutionException}). {@link LockClient#close()} fails pending futures with
     * {@link IllegalStateException}.
     *
     * @throws IllegalArgumentException if timeout is negative
     * @throws NullPointerException if timeout or executor is null
     * @throws IllegalStateException if the client is closed
     */
    CompletableFuture<LockLease> acquireAsync(Duration timeout, Executor executor);

    /** Whether the current thread holds this key through this client with a lease that is still valid. No I/O. */
    boolean isHeldByCurrentThread();

    /**
     * This lock as a {@link Lock}, for code written against {@code java.util.concurrent}: thread-owned, and
     * reentrant where the client declares {@link LockFeature#REENTRANT}, sharing hold counts with {@link #acquire}.
     * {@link Lock#lock()} waits uninterruptibly, in one request that keeps its place in a fair queue, and returns with
     * the interrupt status set if it was interrupted meanwhile; {@link Lock#newCondition()} throws
     * {@link UnsupportedOperationException}, and store failures surface as {@link LockBackendException}.
     *
     * <p>Unlike a {@code ReentrantLock}, a distributed lock can be lost while held, and its client can be closed:
     * {@link Lock#unlock()} throws {@link LockLostException} when the lease was lost before it (the hold is released
     * all the same: the work done under it was not protected), {@link IllegalMonitorStateException} when the thread
     * does not hold the key, and {@link IllegalStateException} when the client was closed (which released the
     * lease). The locking methods throw, as {@link #acquire(Duration)} does, {@link LockLostException} on re-entry
     * into a lost lease and {@link IllegalStateException} on re-entry without {@link LockFeature#REENTRANT} or after
     * close.
     */
    Lock asLock();
}
