package org.locksmith.lock.mysql.internal;

import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.ReentrantLock;
import org.locksmith.lock.spi.AcquireRequest;

/**
 * Unblocks the lock wait of one acquire when the core cancels it (deadline, interrupt, client close). A JDBC
 * statement ignores interrupts, and {@code innodb_lock_wait_timeout}, {@code WAIT n} and {@code GET_LOCK} only
 * count whole seconds (on MySQL), so the statement is cancelled with {@link Statement#cancel()}, which makes the
 * driver send {@code KILL QUERY} over a separate connection. The cancel runs on the backend's own executor because
 * opening that connection blocks, and the core's cancel actions must not.
 */
final class Canceller {
    private final ReentrantLock lock = new ReentrantLock();
    private final Executor executor;
    private Statement running;

    Canceller(AcquireRequest request, Executor executor) {
        this.executor = executor;
        request.onCancel(this::cancelSoon);
    }

    /** The statement now waiting; cancelled if the request is cancelled before {@link #end()}. */
    void begin(Statement statement) {
        lock.lock();
        try {
            running = statement;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The statement returned. Waits for a cancel in progress, so that no {@code KILL QUERY} for this attempt can
     * reach the connection's next statement.
     */
    void end() {
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
            // The statement ends anyway at its server-side lock wait timeout (the backstop).
        } finally {
            lock.unlock();
        }
    }
}
