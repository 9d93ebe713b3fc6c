package org.locksmith.lock;

import java.util.function.Consumer;

/**
 * The proof that a lock is held. Returned by {@link DistributedLock#acquire}; close it (or call {@link #release()})
 * once for every acquire, ideally with try-with-resources.
 *
 * <p>A lease from {@link DistributedLock#acquire} and {@link DistributedLock#tryAcquire} is owned by the thread that
 * acquired it; {@link #release()} from any other thread throws {@link IllegalMonitorStateException} and leaves the
 * lock held. A detached lease ({@link DistributedLock#acquireDetached}, {@link DistributedLock#tryAcquireDetached},
 * {@link DistributedLock#acquireAsync}) belongs to itself: any thread may release it, once.
 *
 * <p>A lease can be lost behind its holder's back: its session with the store died, its lease expired, or its
 * state in the store was removed. From the moment the core can no longer prove the lease held, {@link #isValid()}
 * returns false; where the client declares {@link LockFeature#LOSS_DETECTION}, the core notices such a loss by
 * itself and calls every {@link #onLost} listener exactly once (elsewhere {@link #onLost} is not supported).
 */
public interface LockLease extends AutoCloseable {

    /** The key this lease holds. */
    String key();

    /**
     * The fencing token of this grant: strictly greater than the token of every earlier grant of this key. Pass it
     * to the resource you protect so that it can reject writes from a holder whose lease was lost.
     *
     * @throws UnsupportedOperationException if the client does not declare {@link LockFeature#FENCING}
     */
    long fencingToken();

    /**
     * Whether this lease is held and can still be proved held: false once released, once lost, and once the
     * time for which the store last confirmed it has passed without a renewal. No I/O.
     *
     * <p>The time a confirmation buys: from the send time of the last round trip that confirmed the lease (for
     * session-bound stores, that proved its session alive) plus the backend's lease time (or the store's session
     * timeout, the shorter of both), minus a drift margin of 1% of that time plus 2 ms. A process paused past that
     * bound (GC, SIGSTOP, a frozen VM) sees {@code false} on its first call after it resumes, before any loss
     * report arrives. A lease whose owner thread ended without releasing it is released by the core at its next
     * renewal round and reported lost.
     *
     * <p>A backend may also suspend a lease it cannot prove for a while without having lost it (ZooKeeper: the
     * connection dropped, the session may still be alive): it is invalid meanwhile, with no loss reported, and
     * valid again once the backend proves it, if its time has not run out first (then it is lost).
     */
    boolean isValid();

    /**
     * How many acquires of the owning thread this lease currently stands for; 0 once fully released. A detached
     * lease has one hold until it is released.
     */
    int holdCount();

    /**
     * Registers a listener called exactly once if this lease is lost before it is released; called at once (on
     * the calling thread) if it was lost already. Listeners run on a core thread and must not block. Anything a
     * listener throws, an {@link Error} included, is logged and does not reach the other listeners or the caller of
     * {@link #release()}.
     *
     * @throws UnsupportedOperationException if the client does not declare {@link LockFeature#LOSS_DETECTION}:
     *     without it nothing may ever call the listener; use {@link #isValid()} and the {@link LockLostException}
     *     of {@link #release()} instead
     * @throws NullPointerException if listener is null
     */
    void onLost(Consumer<? super LockLostException> listener);

    /**
     * Releases one hold; the last one releases the lock in the store.
     *
     * @throws IllegalMonitorStateException if the current thread is not the owner (of a lease that is not detached),
     *     or the lease is fully released
     * @throws LockLostException if the lease was lost before this release: the hold is released all the same, and
     *     the exception tells the caller that the work done under it was not protected
     * @throws LockBackendException if the store could not be told; the hold is released locally and the store
     *     frees the lock by itself (lease expiry or session end)
     * @throws IllegalStateException if the client was closed: closing released the lease already
     */
    void release();

    /** Same as {@link #release()}. */
    @Override
    void close();
}
