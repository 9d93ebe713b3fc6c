package org.locksmith.lock;

/**
 * A guarantee a {@link LockClient} makes. A client declares exactly the features it provides
 * ({@link LockClient#features()}); the TCK holds every client to exactly that set: a declared feature
 * must work, and what depends on an undeclared one fails clearly instead of pretending.
 */
public enum LockFeature {
    /** The same thread may acquire a key it holds again; each acquire needs one release. Re-entry costs no round trip. */
    REENTRANT,
    /** Waiters are granted in the order they started waiting, across clients, with no barging. */
    FAIR,
    /**
     * Every grant carries a fencing token ({@link LockLease#fencingToken()}) strictly greater than every earlier
     * token of that key, across clients and holder crashes.
     */
    FENCING,
    /** {@link #FENCING}, and tokens keep rising across a restart of the store (also one that lost its data). */
    DURABLE_FENCING,
    /** A lease has a finite lifetime in the store: a crashed holder's lock frees after at most its lease time. */
    LEASE_EXPIRY,
    /** A live holder's lease is renewed in the background, so it keeps the lock for as long as it holds it. */
    AUTO_RENEWAL,
    /**
     * A lock is bound to the client's session with the store: when the session dies, its locks free promptly. A
     * session dies when its process or host dies, and also when it stays silent (a paused process, a frozen or
     * partitioned host) past the session timeout the backend is configured with; a silent session that the store
     * keeps for hours does not make a backend session-bound.
     */
    SESSION_BOUND,
    /** A waiter is woken by the store when the lock frees, not by a polling interval. */
    BLOCKING_WAKEUP,
    /**
     * A lease lost behind the holder's back (expired, session killed, state deleted) turns invalid ({@link
     * LockLease#isValid()} false) and its {@link LockLease#onLost listeners} fire once.
     */
    LOSS_DETECTION
}
