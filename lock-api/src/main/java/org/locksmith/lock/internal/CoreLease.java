package org.locksmith.lock.internal;

import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.spi.BackendLease;

/**
 * The user's lease: hold count, owner thread, validity clock and loss listeners around one {@link BackendLease}.
 * Only the owner thread changes the hold count; the renewer and the backend's loss reports change the state.
 */
final class CoreLease implements LockLease {
    private enum State {
        HELD,
        LOST,
        RELEASED
    }

    private final CoreLockClient client;
    private final String key;
    private final Thread owner;
    private final BackendLease backendLease;
    private final CoreLockClient.Holder holder;

    /** Serialises the backend calls on this lease (renew, release), as the SPI promises; never held while waiting. */
    final ReentrantLock io = new ReentrantLock();

    private final AtomicReference<State> state = new AtomicReference<>(State.HELD);
    private final CopyOnWriteArrayList<Listener> listeners = new CopyOnWriteArrayList<>();
    private volatile int holdCount = 1;
    private volatile long validUntilNanos;
    private volatile LockLostException lostCause;
    private volatile boolean releasedByClose;

    CoreLease(CoreLockClient client, String key, Thread owner, BackendLease backendLease) {
        this.client = client;
        this.key = key;
        this.owner = owner;
        this.backendLease = backendLease;
        this.holder = new CoreLockClient.Holder(key, owner);
        this.validUntilNanos = client.validUntil(backendLease.confirmedAtNanos());
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
        return state.get() == State.HELD && System.nanoTime() - validUntilNanos < 0;
    }

    boolean isHeld() {
        return state.get() == State.HELD;
    }

    boolean isLost() {
        return state.get() == State.LOST;
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
        return holdCount;
    }

    /** Re-entry by the owner thread: no round trip. */
    CoreLease reenter() {
        if (state.get() == State.LOST) {
            throw new LockLostException(
                    "Cannot re-enter key '" + key + "': this thread's lease was lost; release it first", lostCause);
        }
        if (holdCount == Integer.MAX_VALUE) {
            throw new Error("Maximum lock count exceeded for key '" + key + "'");
        }
        holdCount++;
        return this;
    }

    @Override
    public void onLost(Consumer<? super LockLostException> listener) {
        Objects.requireNonNull(listener, "listener");
        Listener l = new Listener(listener);
        listeners.add(l);
        LockLostException cause = lostCause;
        if (cause != null) {
            l.fire(cause);
        }
    }

    /** Turns the lease invalid and fires every listener once; ignored once released or already lost. */
    void markLost(LockLostException cause) {
        if (!state.compareAndSet(State.HELD, State.LOST)) {
            return;
        }
        lostCause = cause;
        client.notifyLost(this, cause);
    }

    void fireListeners(LockLostException cause) {
        for (Listener l : listeners) {
            l.fire(cause);
        }
    }

    @Override
    public void release() {
        Thread current = Thread.currentThread();
        if (current != owner) {
            throw new IllegalMonitorStateException("Key '" + key + "' is held by thread '" + owner.getName()
                    + "', not by '" + current.getName() + "'");
        }
        if (holdCount == 0) {
            if (releasedByClose) {
                throw new IllegalStateException(
                        "Key '" + key + "' was released when its client was closed; the lease is gone");
            }
            throw new IllegalMonitorStateException("Key '" + key + "' is already fully released");
        }
        holdCount--;
        if (holdCount > 0) {
            throwIfLost();
            return;
        }
        boolean wasLost = state.get() == State.LOST;
        boolean stillHeld = releaseInStore();
        if (wasLost) {
            throwIfLost();
        } else if (!stillHeld) {
            LockLostException lost = new LockLostException("Key '" + key
                    + "' was no longer held for this owner when released: its lease expired or was taken over");
            lostCause = lost;
            fireListeners(lost);
            throw lost;
        }
    }

    private void throwIfLost() {
        LockLostException cause = lostCause;
        if (cause != null) {
            throw new LockLostException(cause.getMessage(), cause);
        }
    }

    /** Releases in the store once; returns whether the store still held it for us. */
    private boolean releaseInStore() {
        client.forget(this);
        io.lock();
        try {
            State previous = state.getAndSet(State.RELEASED);
            if (previous == State.RELEASED) {
                return true;
            }
            return backendLease.release();
        } catch (LockBackendException e) {
            throw new LockBackendException(
                    "Key '" + key + "' released locally; the store could not be told and will free it by itself: "
                            + e.getMessage(),
                    e);
        } finally {
            io.unlock();
        }
    }

    /** Release by {@link CoreLockClient#close()}: never throws. */
    void releaseOnClose() {
        releasedByClose = true;
        holdCount = 0;
        try {
            releaseInStore();
        } catch (RuntimeException e) {
            CoreLockClient.LOG.log(
                    System.Logger.Level.WARNING, "Could not release key '" + key + "' while closing the client", e);
        }
    }

    @Override
    public void close() {
        release();
    }

    @Override
    public String toString() {
        return "LockLease[key=" + key + ", owner=" + owner.getName() + ", holds=" + holdCount + ", state=" + state.get()
                + "]";
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
                } catch (RuntimeException e) {
                    CoreLockClient.LOG.log(System.Logger.Level.WARNING, "onLost listener failed", e);
                }
            }
        }
    }
}
