package org.locksmith.lock.tck.reference;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.Locks;
import org.locksmith.lock.tck.LockFaults;
import org.locksmith.lock.tck.LockTck;

/**
 * The TCK over the in-memory backend, with every fault hook. Subclasses choose the features it declares and the
 * defects it has; the reference subclass has none.
 */
abstract class MemoryTck extends LockTck {
    final MemoryStore store = new MemoryStore();
    final Map<LockClient, MemoryLockBackend> backends = Collections.synchronizedMap(new IdentityHashMap<>());

    abstract String name();

    Set<LockFeature> features() {
        return MemoryLockBackend.ALL;
    }

    Set<MemoryLockBackend.Defect> defects() {
        return Set.of();
    }

    /** Each client gets its own store: the "no exclusion across clients" defect. */
    boolean storePerClient() {
        return false;
    }

    @Override
    protected LockClient newClient() {
        MemoryLockBackend backend = new MemoryLockBackend(
                storePerClient() ? new MemoryStore() : store,
                name(),
                features(),
                timings().leaseTime(),
                defects());
        LockClient client = Locks.client(backend);
        backends.put(client, backend);
        return client;
    }

    @Override
    protected OptionalInt storeEntries(String key) {
        return OptionalInt.of(store.entriesLocked(key));
    }

    @Override
    protected OptionalLong storeOperations() {
        return OptionalLong.of(store.operations.get());
    }

    @Override
    protected OptionalInt openConnections() {
        return OptionalInt.of(store.connections.get());
    }

    @Override
    protected LockFaults faults() {
        return new LockFaults() {
            @Override
            public Set<Fault> supported() {
                return Set.of(
                        Fault.KILL_SESSION,
                        Fault.DELETE_LOCK_STATE,
                        Fault.RESTART_STORE,
                        Fault.RESTART_STORE_EMPTY,
                        Fault.STORE_OUTAGE,
                        Fault.STALL_LEASE);
            }

            @Override
            public void killSession(LockClient client) {
                backends.get(client).killSession();
            }

            @Override
            public void deleteLockState(String key) {
                store.lock.lock();
                try {
                    MemoryStore.KeyState ks = store.keys.get(key);
                    if (ks != null) {
                        ks.holder = null;
                        store.changed.signalAll();
                        store.dropIfUnused(key, ks);
                    }
                } finally {
                    store.lock.unlock();
                }
            }

            @Override
            public void restartStore() {
                store.restart(restartHoldOff());
            }

            @Override
            public void restartStoreEmpty() {
                store.restartEmpty(restartHoldOff());
            }

            @Override
            public Outage beginOutage() {
                store.setDown(true);
                return () -> store.setDown(false);
            }

            @Override
            public Outage stallLease(LockClient client, String key) {
                store.setStalled(key, true);
                return () -> store.setStalled(key, false);
            }
        };
    }

    /** The longest a client may believe in a lock the store forgot: its lease or its session bound. */
    private java.time.Duration restartHoldOff() {
        return timings().leaseTime().compareTo(timings().sessionTimeout()) >= 0
                ? timings().leaseTime()
                : timings().sessionTimeout();
    }
}
