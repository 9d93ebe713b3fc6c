package org.locksmith.lock.bench;

import java.time.Duration;

/**
 * One lock implementation under test — a Locksmith backend or a peer — seen through the few operations every
 * scenario needs. A {@link Client} is what one process would hold (its own connections); a {@link Handle} is one
 * key seen by one thread of that client.
 */
public interface Contender {

    /** How long any scenario waits for a grant before it fails the run: far above every expected wait. */
    Duration GRANT_TIMEOUT = Duration.ofSeconds(30);

    /** A short stable name, used on the command line and in the report ({@code locksmith-redis}). */
    String name();

    /** One line on what it is and how it is configured. */
    String description();

    /** The store it runs against. */
    StoreKind store();

    /** True for Locksmith's own backends, false for the peers compared against. */
    boolean ours();

    /**
     * Opens a client with its own connections.
     *
     * @param lease the lease (or watchdog) time to use, or null for the implementation's default; implementations
     *     without leases ignore it
     */
    Client open(Stores stores, Duration lease) throws Exception;

    /** Why {@code scenario} does not apply to this contender, or null when it does. */
    default String notApplicable(Scenario scenario) {
        return null;
    }

    /** One connection set to the store. */
    interface Client extends AutoCloseable {
        /** A handle on {@code key}, for the calling thread only. No I/O. */
        Handle handle(String key);

        @Override
        void close() throws Exception;
    }

    /** One key, used by one thread: blocking acquire, release. Re-entrant where the implementation is. */
    interface Handle {
        /** Acquires, waiting up to {@link #GRANT_TIMEOUT}; fails the run if not granted by then. */
        void lock() throws Exception;

        /** Releases one hold. */
        void unlock() throws Exception;
    }
}
