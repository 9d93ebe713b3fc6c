package org.locksmith.lock.jdbc.internal;

import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.ReentrantLock;
import org.locksmith.lock.spi.AcquireRequest;

/**
 * Unblocks the lock wait of one acquire when the core cancels it (deadline, interrupt, client close). A JDBC
 * statement ignores interrupts, and the servers' own lock wait bounds are coarse or only a backstop ({@code
 * innodb_lock_wait_timeout} and {@code GET_LOCK} count whole seconds on MySQL, PostgreSQL's {@code lock_timeout} is
 * set per wait), so the statement is cancelled with {@link Statement#cancel()}, which makes the driver send a cancel
 * over a separate connection ({@code KILL QUERY} on MySQL, a cancel request on PostgreSQL). The cancel runs on the
 * backend's executor because opening that connection blocks, and the core's cancel actions must not.
 *
 * <p>Contract: between {@link #begin} and {@link #end} the statement is cancelled at most once, soon after the
 * request is cancelled; after {@link #end} returns no cancel of this attempt can reach the connection's next
 * statement. A failed cancel is ignored: the statement then ends at its server-side bound.
 */
public final class Canceller {
    private final ReentrantLock lock = new ReentrantLock();
    private final Executor executor;
    private Statement running;

    /**
     * A canceller for the statements of {@code request}, cancelling on {@code executor} (on the calling thread if it
     * rejects the task: the backend is closing).
     */
    public Canceller(AcquireRequest request, Executor executor) {
        this.executor = executor;
        request.onCancel(this::cancelSoon);
    }

    /** The statement now waiting; cancelled if the request is cancelled before {@link #end()}. */
    public void begin(Statement statement) {
        lock.lock();
        try {
            running = statement;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The statement returned. Waits for a cancel in progress, so that no cancel for this attempt can reach the
     * connection's next statement.
     */
    public void end() {
        lock.lock();
        try {
            running = null;
        } finally {
            lock.unlock();
        }
    }

    private void cancelSoon() {
        try {
            executor.execute(this::cancelNow);
        } catch (RejectedExecutionException e) {
            cancelNow(); // the backend is closing: cancel on this thread rather than never
        }
    }

    private void cancelNow() {
        lock.lock();
        try {
            if (running != null) {
                running.cancel();
            }
        } catch (SQLException | RuntimeException e) {
            // The statement ends anyway at its server-side lock wait bound (the backstop).
        } finally {
            lock.unlock();
        }
    }
}
