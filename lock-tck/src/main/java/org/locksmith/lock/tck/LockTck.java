package org.locksmith.lock.tck;

import java.util.Optional;
import java.util.OptionalInt;
import org.locksmith.lock.LockClient;

/**
 * The Locksmith technology compatibility kit. A backend proves itself by extending this class in its tests and
 * returning a fresh client from {@link #newClient()}; {@code mvn test} then runs every contract of DESIGN.md
 * against it, gated by the features the client declares. Tests of undeclared features are skipped with a reason;
 * tests that need a fault hook or worker processes the backend does not offer are skipped naming what is missing.
 *
 * <p>Test names follow the contract numbers: {@code c01_mutualExclusion_...}, {@code c10_fencing_...}.
 * Every failure message names the contract, the backend, the key and the client.
 */
public abstract class LockTck {

    /**
     * A new client of the backend under test, connected to the store, configured with the times in {@link
     * #timings()} (short leases for tests). Called many times; the TCK closes every client it gets.
     */
    protected abstract LockClient newClient();

    /**
     * A URL for {@link org.locksmith.lock.Locks#open(String)} that opens the same kind of client from a separate
     * JVM started with this JVM's class path; empty to skip the multi-process contracts.
     */
    protected Optional<String> workerUrl() {
        return Optional.empty();
    }

    /** The faults this backend's test can inflict; {@link LockFaults#NONE} by default. */
    protected LockFaults faults() {
        return LockFaults.NONE;
    }

    /**
     * How many records the store keeps for {@code key} right now, waiters included (the hash and wake-up list in
     * Redis, lock and waiter nodes in ZooKeeper, rows in MySQL); empty if the test cannot look. The cleanup and
     * interruption contracts use it to prove that released keys and abandoned waiters leave bounded state.
     */
    protected OptionalInt storeEntries(String key) {
        return OptionalInt.empty();
    }

    /** The times the clients are configured with and the allowances granted; {@link TckTimings#defaults()}. */
    protected TckTimings timings() {
        return TckTimings.defaults();
    }
}
