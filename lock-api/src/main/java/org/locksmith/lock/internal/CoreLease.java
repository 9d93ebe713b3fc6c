package org.locksmith.lock.internal;

import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.spi.BackendLease;

/**
 * The user's lease: hold count, owner thread, validity clock and loss listeners around one {@link BackendLease}.
 * The owner thread (any thread, once, for a detached lease) raises and lowers the hold count, close() sets it to
 * zero, the renewer and the backend's loss reports change the state; hold count and state are one atomic value, so
 * that no race of these ends with a negative count or a re-entry into a lease that close() released.
 */
final class CoreLease implements LockLease {
    private enum State {
        HELD,
        LOST,
        RELEASED
    }

    private final CoreLockClient client;
    private final String key;
    /** The thread that acquired the lease; null for a detached lease, which any thread may release once. */
    private final Thread owner;

    private final BackendLease backendLease;
    private final CoreLockClient.Holder holder;
    /** When the store's grant reached the core ({@link System#nanoTime()}), for the hold time of the release event. */
    private final long grantedAtNanos;

    /**
     * Serialises the backend calls on this lease (renew, release), as the SPI promises; never held while waiting for
     * the key. A semaphore, not a lock: a renewal round takes it on the renewer's thread and gives it back from
     * whichever thread the backend reports this lease's outcome on.
     */
    final Semaphore io = new Semaphore(1);

    /**
     * Where the lease is, how many holds its owner has, whether close() ended them and, once lost, why, in one
     * immutable value: whoever sees the lease lost sees the cause too, and a release or re-entry decides from the
     * very status it replaces, not from an earlier look.
     */
    private record Status(State state, int holds, boolean byClose, LockLostException lostCause) {
        Status withHolds(int n) {
            return new Status(state, n, byClose, lostCause);
        }

        Status lost(LockLostException cause) {
            return new Status(State.LOST, holds, byClose, cause);
        }

        Status released() {
            return new Status(State.RELEASED, holds, byClose, lostCause);
        }
    }

    private final AtomicReference<Status> status = new AtomicReference<>(new Status(State.HELD, 1, false, null));
    private final CopyOnWriteArrayList<Listener> listeners = new CopyOnWriteArrayList<>();
    private volatile long validUntilNanos;
    /** Whether a lost lease was released in the store already, in the background; guarded by {@link #io}. */
    private boolean storeReleased;
    /** The watchdog's look at this lease when its time runs out; null while none is pending. */
    private volatile ScheduledFuture<?> expiryCheck;

    CoreLease(
            CoreLockClient client,
            String key,
            Thread owner,
            BackendLease backendLease,
            long confirmedAtNanos,
            long grantedAtNanos) {
        this.client = client;
        this.grantedAtNanos = grantedAtNanos;
        this.key = key;
        this.owner = owner;
        this.backendLease = backendLease;
        this.holder = new CoreLockClient.Holder(key, owner != null ? owner : new Object());
        this.validUntilNanos = client.validUntil(confirmedAtNanos);
    }

    CoreLockClient.Holder holder() {
        return holder;
    }

    BackendLease backendLease() {
        return backendLease;
    }

    @Override
    public String key() {
        return key;
    }

    @Override
    public long fencingToken() {
        if (!client.features().contains(LockFeature.FENCING)) {
            throw new UnsupportedOperationException("Backend '" + client.backend()
                    + "' does not issue fencing tokens (it does not declare LockFeature.FENCING)");
        }
        return backendLease.fencingToken();
    }

    @Override
    public boolean isValid() {
        return isHeld() && System.nanoTime() - validUntilNanos < 0 && !backendLease.isSuspended();
    }

    boolean isHeld() {
        return status.get().state() == State.HELD;
    }

    long validUntilNanos() {
        return validUntilNanos;
    }

    /** The store confirmed the lease by a round trip sent at {@code sentAtNanos}. */
    void renewed(long sentAtNanos) {
        long until = client.validUntil(sentAtNanos);
        if (until - validUntilNanos > 0) {
            validUntilNanos = until;
        }
    }

    @Override
    public int holdCount() {
        return status.get().holds();
    }

    /**
     * Re-entry by the owner thread: no round trip. Hands out the lease only while it is valid and its client open;
     * one compare-and-set decides against a concurrent close(), which either comes after (and ends this hold too)
     * or before (and this re-entry fails).
     */
    CoreLease reenter() {
        if (isHeld() && System.nanoTime() - validUntilNanos >= 0) {
            // Past its time and nobody has said so yet (no renewal round or timer since): this is the loss.
            markLost(ranOut());
        }
        while (true) {
            Status now = status.get();
            if (now.byClose() || now.state() == State.RELEASED) {
                // Only close() ends a lease behind its owner's back; the owner's own release forgets it first.
                throw new IllegalStateException(
                        "Key '" + key + "' was released when its client was closed; the lease is gone");
            }
            if (now.state() == State.LOST) {
                throw new LockLostException(
                        "Cannot re-enter key '" + key + "': this thread's lease was lost; release it first",
                        now.lostCause());
            }
            if (now.holds() == Integer.MAX_VALUE) {
                throw new Error("Maximum lock count exceeded for key '" + key + "'");
            }
            if (status.compareAndSet(now, now.withHolds(now.holds() + 1))) {
                return this;
            }
        }
    }

    @Override
    public void onLost(Consumer<? super LockLostException> listener) {
        Objects.requireNonNull(listener, "listener");
        if (!client.features().contains(LockFeature.LOSS_DETECTION)) {
            // Accepting it would promise a call that may never come.
            throw new UnsupportedOperationException("Backend '" + client.backend()
                    + "' does not report lost leases (it does not declare LockFeature.LOSS_DETECTION); check "
                    + "isValid() and the LockLostException of release() instead");
        }
        Listener l = new Listener(listener);
        listeners.add(l);
        LockLostException cause = status.get().lostCause();
        if (cause != null) {
            l.fire(cause);
        }
    }

    /**
     * Run by the watchdog at this lease's valid-until time: reports the lease lost if its time has run out, else
     * (it was renewed meanwhile) looks again at its new time. Without it, a lease that nothing renews would turn
     * invalid without its listeners ever hearing of it.
     */
    void checkExpiry() {
        if (!isHeld()) {
            return;
        }
        if (System.nanoTime() - validUntilNanos >= 0) {
            markLost(ranOut());
        } else {
            client.watchExpiry(this);
        }
    }

    /** Whether a watchdog look at this lease's expiry is pending. */
    boolean expiryWatched() {
        ScheduledFuture<?> check = expiryCheck;
        return check != null && !check.isDone();
    }

    void expiryCheck(ScheduledFuture<?> check) {
        expiryCheck = check;
        // A release that ran before the line above could not cancel this check: cancel it here.
        if (status.get().state() == State.RELEASED) {
            check.cancel(false);
        }
    }

    private void cancelExpiryCheck() {
        ScheduledFuture<?> check = expiryCheck;
        if (check != null) {
            check.cancel(false);
        }
    }

    /** Why a lease that the store did not confirm within its lease time is lost. */
    LockLostException ranOut() {
        return new LockLostException("Lease of key '" + key + "' ran out: the store did not confirm it within "
                + client.trustTime().toMillis() + " ms less the drift margin (renewal or session check failed, was"
                + " late, or the process was paused, or the backend does not renew)");
    }

    /** Whether the thread that acquired this lease still runs; a dead one can never release it. */
    boolean ownerAlive() {
        return owner == null || owner.isAlive();
    }

    /**
     * Ends a lease whose owner thread died holding it: reported lost (with a log line naming key and thread), then
     * released in the store, so the key does not stay locked for every process until the client closes. Run by
     * the renewer; never throws.
     */
    void releaseAbandoned() {
        LockLostException cause = new LockLostException("Lease of key '" + key + "' was abandoned: its owner thread '"
                + owner.getName() + "' ended without releasing it; the core released it");
        CoreLockClient.LOG.log(System.Logger.Level.WARNING, cause.getMessage());
        markLost(cause);
        releaseQuietly(false, "abandoned by its owner thread");
    }

    /**
     * Turns the lease invalid and fires every listener once; ignored once released or already lost. On a store that
     * keeps a lock for as long as its session lives, the lease is also released in the store in the background
     * ({@link CoreLockClient#releaseLost}).
     */
    void markLost(LockLostException cause) {
        Status before = status.getAndUpdate(s -> s.state() == State.HELD ? s.lost(cause) : s);
        if (before.state() == State.HELD) {
            client.signals().lost(key, cause.getMessage());
            cancelExpiryCheck();
            client.notifyLost(this, cause);
            client.releaseLost(this);
        }
    }

    /**
     * Releases a lost lease in the store, once, under the I/O lock; the owner's {@link #release()} then only reports
     * the loss. Run on a helper thread; never throws.
     */
    void releaseLostInStore() {
        io.acquireUninterruptibly();
        try {
            if (status.get().state() != State.LOST || storeReleased) {
                return;
            }
            storeReleased = true;
            backendLease.release();
        } catch (RuntimeException e) {
            CoreLockClient.LOG.log(
                    System.Logger.Level.DEBUG,
                    "Could not release the lost lease of key '" + key + "' in the store; its session frees it",
                    e);
        } finally {
            io.release();
        }
    }

    void fireListeners(LockLostException cause) {
        for (Listener l : listeners) {
            l.fire(cause);
        }
    }

    @Override
    public void release() {
        Thread current = Thread.currentThread();
        if (owner != null && current != owner) {
            throw new IllegalMonitorStateException("Key '" + key + "' is held by thread '" + owner.getName()
                    + "', not by '" + current.getName() + "'");
        }
        Status now;
        do {
            now = status.get();
            if (now.holds() == 0) {
                if (now.byClose()) {
                    throw new IllegalStateException(
                            "Key '" + key + "' was released when its client was closed; the lease is gone");
                }
                throw new IllegalMonitorStateException("Key '" + key + "' is already fully released");
            }
        } while (!status.compareAndSet(now, now.withHolds(now.holds() - 1)));
        if (now.holds() > 1) {
            LockLostException cause = now.lostCause();
            if (cause != null) {
                throw new LockLostException(cause.getMessage(), cause);
            }
            return;
        }
        LockLostException lost = releaseInStore();
        if (lost != null) {
            // Each listener runs once: one the notifier already called is not called again.
            fireListeners(lost);
            throw new LockLostException(lost.getMessage(), lost);
        }
    }

    /**
     * Ends the lease and releases it in the store, once. Returns why the lease was lost before this release, or
     * that the store no longer held it for us; null if it was held to the end.
     */
    private LockLostException releaseInStore() {
        io.acquireUninterruptibly();
        try {
            // Decided under the I/O lock and in one step with the end of the lease: a loss reported while this
            // release waited for a renewal is seen here, and none can be reported after.
            Status before = status.getAndUpdate(s -> s.state() == State.RELEASED ? s : s.released());
            cancelExpiryCheck();
            if (before.state() == State.RELEASED) {
                return before.lostCause();
            }
            boolean stillHeld = !storeReleased && backendLease.release();
            if (before.state() == State.LOST || stillHeld) {
                client.signals().released(key, grantedAtNanos, before.state() == State.LOST);
                return before.lostCause();
            }
            LockLostException gone = new LockLostException("Key '" + key
                    + "' was no longer held for this owner when released: its lease expired or was taken over");
            status.updateAndGet(s -> new Status(State.RELEASED, s.holds(), s.byClose(), gone));
            client.signals().lost(key, gone.getMessage());
            client.signals().released(key, grantedAtNanos, true);
            return gone;
        } catch (LockBackendException e) {
            client.signals().backendError(key, "release", e);
            throw new LockBackendException(
                    "Key '" + key + "' released locally; the store could not be told and will free it by itself: "
                            + e.getMessage(),
                    e);
        } finally {
            // Forgotten only now: close() releases whatever is still registered, so it waits (on the I/O lock) for
            // a release in progress instead of closing the backend under it.
            client.forget(this);
            io.release();
        }
    }

    /** Release of a detached lease that nobody took (its future was cancelled or completed): never throws. */
    void releaseUnclaimed() {
        releaseQuietly(false, "granted to an async acquire that was no longer waiting");
    }

    /** Release by {@link CoreLockClient#close()}: never throws. */
    void releaseOnClose() {
        releaseQuietly(true, "while closing the client");
    }

    /** Ends every hold and releases in the store on the core's behalf; a store failure is logged, never thrown. */
    private void releaseQuietly(boolean byClose, String why) {
        status.updateAndGet(s -> new Status(s.state(), 0, s.byClose() || byClose, s.lostCause()));
        try {
            releaseInStore();
        } catch (RuntimeException e) {
            CoreLockClient.LOG.log(System.Logger.Level.WARNING, "Could not release key '" + key + "' " + why, e);
        }
    }

    @Override
    public void close() {
        release();
    }

    @Override
    public String toString() {
        Status now = status.get();
        return "LockLease[key=" + key + ", owner=" + (owner == null ? "(detached)" : owner.getName()) + ", holds="
                + now.holds() + ", state=" + now.state() + "]";
    }

    /** Calls its consumer at most once, whoever gets there first (the notifier or {@link #onLost}). */
    private static final class Listener {
        private final Consumer<? super LockLostException> consumer;
        private final AtomicBoolean fired = new AtomicBoolean();

        Listener(Consumer<? super LockLostException> consumer) {
            this.consumer = consumer;
        }

        void fire(LockLostException cause) {
            if (fired.compareAndSet(false, true)) {
                try {
                    consumer.accept(cause);
                } catch (Throwable e) {
                    // Errors too (an AssertionError in a test's listener, a StackOverflowError): one listener's bug
                    // must not skip the others, end the notifier's task, or replace release()'s LockLostException.
                    CoreLockClient.LOG.log(System.Logger.Level.ERROR, "onLost listener failed", e);
                }
            }
        }
    }
}
