package org.locksmith.lock.tck;

import org.locksmith.lock.LockClient;

/**
 * One backend for {@link LockBackendsTest}: opens a fresh client of it for one test invocation (the extension closes
 * it afterwards). Implementations need a public no-argument constructor.
 */
public interface LockClientSource {

    /** Opens a new client; called once per test invocation. */
    LockClient open();

    /** The name shown for the invocation; by default the client's {@link LockClient#backend()}. */
    default String name() {
        return getClass().getSimpleName();
    }
}
