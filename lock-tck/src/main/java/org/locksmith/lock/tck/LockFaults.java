package org.locksmith.lock.tck;

import java.util.Set;
import org.locksmith.lock.LockClient;

/**
 * The faults a backend's test can inflict on its store, so that the TCK can check what happens when things go
 * wrong. A backend test returns one from {@link LockTck#faults()}; contracts that need a fault the backend cannot
 * inflict are skipped with a reason naming the fault, never passed.
 */
public interface LockFaults {

    /** The faults a backend's test may be able to inflict. */
    enum Fault {
        /**
         * End the client's session(s) with the store from the store's side (ZooKeeper session expiry, Redis
         * {@code CLIENT KILL}, MySQL {@code KILL CONNECTION}), without telling the client. A {@code SESSION_BOUND}
         * client's locks must then free and its leases turn invalid; any other client's leases may survive (it
         * reconnects and renews) but must never be valid while another client can be granted the key.
         */
        KILL_SESSION,
        /** Remove the store's state for one key behind every holder's back. */
        DELETE_LOCK_STATE,
        /** Restart the store (a private instance), losing whatever the store loses in a crash restart. */
        RESTART_STORE,
        /**
         * Restart the store (a private instance) with none of its data: every lock, session and counter gone, as
         * after the crash of a store that keeps nothing on disk, or a restore onto an empty server. {@code
         * DURABLE_FENCING} is verified only with this fault.
         */
        RESTART_STORE_EMPTY,
        /** Make the store unreachable (stop or pause a private instance) until the outage is ended. */
        STORE_OUTAGE,
        /**
         * Stall the one store connection or session through which a client holds one key (PostgreSQL: SIGSTOP its
         * server process), until the stall is ended: its requests get no answer, and every other connection or
         * session of the store answers as before.
         */
        STALL_LEASE
    }

    /** No faults: every fault-driven contract is skipped. */
    LockFaults NONE = Set::of;

    /** The faults this implementation can inflict: the hook methods below for the others throw. */
    Set<Fault> supported();

    /** {@link Fault#KILL_SESSION}: ends {@code client}'s sessions from the store's side and returns at once. */
    default void killSession(LockClient client) {
        throw new UnsupportedOperationException("KILL_SESSION");
    }

    /** {@link Fault#DELETE_LOCK_STATE}: removes the store's state of {@code key}, as an operator might. */
    default void deleteLockState(String key) {
        throw new UnsupportedOperationException("DELETE_LOCK_STATE");
    }

    /** {@link Fault#RESTART_STORE}: restarts the store and returns when it serves again. */
    default void restartStore() {
        throw new UnsupportedOperationException("RESTART_STORE");
    }

    /**
     * {@link Fault#RESTART_STORE_EMPTY}: restarts the store with none of its data, recreates what an operator
     * restoring an empty server would (the schema a backend needs, for example), and returns when the store serves
     * again.
     */
    default void restartStoreEmpty() {
        throw new UnsupportedOperationException("RESTART_STORE_EMPTY");
    }

    /**
     * {@link Fault#STORE_OUTAGE}: makes the store unreachable until the returned outage is closed; closing it
     * returns when the store serves again.
     */
    default Outage beginOutage() {
        throw new UnsupportedOperationException("STORE_OUTAGE");
    }

    /**
     * {@link Fault#STALL_LEASE}: stalls the store connection or session through which {@code client} holds {@code
     * key} right now (it answers no request, neither fails nor closes) until the returned stall is closed; closing it
     * returns once that connection or session answers again, or has been closed by the client meanwhile. Returns
     * once the stall is in effect.
     */
    default Outage stallLease(LockClient client, String key) {
        throw new UnsupportedOperationException("STALL_LEASE");
    }

    /** A store outage or stall in progress; {@link #close()} ends it. */
    interface Outage extends AutoCloseable {
        @Override
        void close();
    }
}
