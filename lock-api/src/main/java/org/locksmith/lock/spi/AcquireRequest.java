package org.locksmith.lock.spi;

/**
 * One attempt to acquire a key, handed by the core to {@link LockBackend#acquire}. The core has already checked
 * the key, handled re-entry and checked the interrupt status; the backend only talks to its store.
 *
 * <p>Deadlines are {@link System#nanoTime()} values. A request with {@link #remainingNanos()} {@code <= 0} from the
 * start ({@link #isTry()}) must make exactly one attempt and never wait on the holder.
 *
 * <p>Cancellation: the request is cancelled when the calling thread is interrupted, when its deadline passes, or
 * when the client closes. A backend whose wait is interruptible (a {@code Condition}, a latch) needs nothing more.
 * A backend blocked in a store call that ignores interrupts (a socket read, a JDBC statement) registers an {@link
 * #onCancel} action that unblocks it (cancel the statement, unblock the client); the core runs that action from
 * another thread as soon as the waiting thread is interrupted, or at the deadline. Register the action on the thread
 * that called {@link LockBackend#acquire}, before it blocks: the core hears that thread's interrupt when it happens
 * (through the JDK's interruptible-I/O hook, which a store call blocking in an interruptible NIO channel on the same
 * thread uses for itself); an action registered from another thread is run within about {@value
 * #CANCEL_CHECK_MILLIS} ms of the interrupt instead. Waiting requests cost no CPU while nothing happens. When the
 * client closes and a wait has not ended within about 100 ms of the cancellation, the core also interrupts the
 * waiting thread (and clears that interrupt afterwards), so a wait on a {@code Condition} ends then too.
 *
 * <p>Cancel actions run on the core's helper threads, apart from each other: a slow one delays no other waiter.
 * When {@link LockBackend#acquire} has returned, none of the request's actions runs or will run: the core waits
 * for a running one before it returns to the caller, so an action never hits what the connection does next.
 */
public interface AcquireRequest {

    /**
     * How often, in milliseconds, the core checks a waiting thread for interruption when its cancel action was
     * registered from another thread (see the class comment); a backend that must poll may use it as its slice.
     */
    int CANCEL_CHECK_MILLIS = 20;

    /** The key, as the user gave it (validated: 1 to 1024 chars, well-formed UTF-16). Encode it for your store. */
    String key();

    /**
     * An identifier of this attempt's owner, unique across clients, threads and processes (the client's random id
     * and a per-grant counter). Store it as the lock's owner and check it on renew and release.
     */
    String ownerId();

    /** The deadline, as a {@link System#nanoTime()} value; {@link Long#MAX_VALUE} for none. */
    long deadlineNanos();

    /** Nanoseconds left until the deadline; {@code <= 0} means: do not wait any more. */
    long remainingNanos();

    /** True if this request must not wait at all (a {@code tryAcquire()}). */
    boolean isTry();

    /**
     * False for {@code asLock().lock()}, which {@code Lock.lock()} says is not interruptible: then an interrupt does
     * not cancel the request ({@link #isCancelled()} ignores it) and the caller waits on. A backend with a queue
     * ({@link org.locksmith.lock.LockFeature#FAIR}) keeps the request's place through interrupts: where its wait
     * throws {@code InterruptedException}, it notes the interrupt, waits on in the same request and sets the
     * thread's interrupt status again before it returns. A backend that throws {@code InterruptedException} anyway
     * is retried by the core with a new request, which is correct but goes to the back of a queue.
     */
    boolean isInterruptible();

    /** True once this request was cancelled (interrupt, deadline or client close); stop waiting and clean up. */
    boolean isCancelled();

    /**
     * Registers an action the core runs once, from another thread, when this request is cancelled while the
     * backend waits; runs it at once if the request is cancelled already. Use it to unblock an uninterruptible
     * store call. The action must not block.
     */
    void onCancel(Runnable action);

    /**
     * Says why the store does not grant the key now for a reason other than another owner holding it, such as a
     * server that grants nothing for a while after its start: a refusal the user cannot explain by looking at the
     * key's holders. Call it before returning null (or waiting on); a later call replaces the reason. The core names
     * the last reason in the {@link org.locksmith.lock.LockTimeoutException} of an acquire that timed out, and logs
     * it (at {@code INFO}, logger {@code org.locksmith.lock}) when a try without waiting was refused, once per
     * client and distinct reason. The reason should say what refuses, until when, and which setting governs it. A
     * request the core did not build may ignore it, as the default does.
     *
     * @param reason one sentence, not null
     */
    default void refusedBecause(String reason) {}

    /**
     * Reports that the lease granted for this request can no longer be proved held (its session died, its
     * connection was killed, its state vanished). Callable from any thread at any time after the grant; the core
     * turns the lease invalid and fires its listeners once. Calls after release are ignored.
     */
    void reportLost(String reason, Throwable cause);
}
