package org.locksmith.lock.internal;

import java.util.Arrays;
import java.util.Objects;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockObserver;
import org.locksmith.lock.spi.BackendLease;

/**
 * Where the core reports a client's lock events: to the flight recorder ({@link LockEvents}) and to the observers
 * the user added ({@link LockObserver}). With neither listening, each report is a volatile read and the flight
 * recorder's flag check: the clock is not read and no text is built. An observer that throws is logged and skipped.
 */
final class Signals {
    private static final LockObserver[] NONE = {};

    private final String backend;
    private volatile LockObserver[] observers = NONE;

    Signals(String backend) {
        this.backend = backend;
    }

    synchronized void add(LockObserver observer) {
        Objects.requireNonNull(observer, "observer");
        LockObserver[] now = Arrays.copyOf(observers, observers.length + 1);
        now[now.length - 1] = observer;
        observers = now;
    }

    synchronized void remove(LockObserver observer) {
        LockObserver[] now = observers;
        for (int i = 0; i < now.length; i++) {
            if (now[i] == observer) {
                LockObserver[] fewer = new LockObserver[now.length - 1];
                System.arraycopy(now, 0, fewer, 0, i);
                System.arraycopy(now, i + 1, fewer, i, now.length - i - 1);
                observers = fewer;
                return;
            }
        }
    }

    /** {@link System#nanoTime()} if anyone wants the wait of an acquire, else 0. */
    long acquireStart() {
        return observers.length != 0 ? System.nanoTime() : LockEvents.acquireStart();
    }

    /** A grant; observers hear of it only if {@code startNanos} was read ({@link #acquireStart()}). */
    void acquired(String key, long startNanos, BackendLease lease, boolean fencing) {
        LockEvents.acquired(backend, key, startNanos, lease, fencing);
        LockObserver[] os = observers;
        if (os.length != 0 && startNanos != 0) {
            long wait = System.nanoTime() - startNanos;
            long token = fencing ? lease.fencingToken() : -1;
            for (LockObserver o : os) {
                try {
                    o.acquired(backend, key, wait, token);
                } catch (Throwable t) {
                    failed(o, t);
                }
            }
        }
    }

    void released(String key, long grantedAtNanos, boolean lost) {
        LockEvents.released(backend, key, grantedAtNanos, lost);
        LockObserver[] os = observers;
        if (os.length != 0) {
            long hold = System.nanoTime() - grantedAtNanos;
            for (LockObserver o : os) {
                try {
                    o.released(backend, key, hold, lost);
                } catch (Throwable t) {
                    failed(o, t);
                }
            }
        }
    }

    void timedOut(String key, long startNanos) {
        LockEvents.timedOut(backend, key, startNanos);
        LockObserver[] os = observers;
        if (os.length != 0 && startNanos != 0) {
            long wait = System.nanoTime() - startNanos;
            for (LockObserver o : os) {
                try {
                    o.timedOut(backend, key, wait);
                } catch (Throwable t) {
                    failed(o, t);
                }
            }
        }
    }

    void lost(String key, String reason) {
        LockEvents.lost(backend, key, reason);
        for (LockObserver o : observers) {
            try {
                o.lost(backend, key, reason);
            } catch (Throwable t) {
                failed(o, t);
            }
        }
    }

    /** A renewal not confirmed, because of {@code cause} (its text is built only when someone listens). */
    void renewalFailed(String key, Object cause) {
        LockEvents.renewalFailed(backend, key, cause);
        LockObserver[] os = observers;
        if (os.length != 0) {
            String reason = String.valueOf(cause);
            for (LockObserver o : os) {
                try {
                    o.renewalFailed(backend, key, reason);
                } catch (Throwable t) {
                    failed(o, t);
                }
            }
        }
    }

    void backendError(String key, String operation, LockBackendException error) {
        LockEvents.backendError(backend, key, operation, error);
        for (LockObserver o : observers) {
            try {
                o.backendError(backend, key, operation, error);
            } catch (Throwable t) {
                failed(o, t);
            }
        }
    }

    private static void failed(LockObserver observer, Throwable t) {
        if (t instanceof VirtualMachineError fatal) {
            throw fatal;
        }
        CoreLockClient.LOG.log(
                System.Logger.Level.WARNING, "Lock observer " + observer + " threw; the event is not repeated", t);
    }
}
