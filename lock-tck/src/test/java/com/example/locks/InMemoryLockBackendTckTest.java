package com.example.locks;

import java.util.OptionalInt;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;
import org.locksmith.lock.tck.LockTck;

/** The worked example of docs/writing-a-backend.md: a third party runs the whole TCK against its backend with one class. */
class InMemoryLockBackendTckTest extends LockTck {
    private final InMemoryLockBackend.Store store = new InMemoryLockBackend.Store();

    @Override
    protected LockClient newClient() {
        return Locks.client(new InMemoryLockBackend(store));
    }

    @Override
    protected OptionalInt storeEntries(String key) {
        return OptionalInt.of(store.entries(key));
    }
}
