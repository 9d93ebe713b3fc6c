package org.locksmith.lock.jdbc.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;
import org.locksmith.lock.LockBackendException;

/** The first connection of a backend, opened within a deadline whatever the driver or pool does. */
public final class FirstConnection {
    private FirstConnection() {}

    /**
     * Opens a connection with {@code connector} on a new daemon thread named {@code threadName} and waits for it at
     * most {@code timeoutNanos}, through interrupts (the interrupt status is set again on return): a connect or login
     * may outlast its own timeouts (drivers count them in whole seconds), and a pool retries until its connection
     * timeout. A connection that arrives after the caller gave up is closed.
     *
     * @param name the store as the messages name it
     * @param failure turns the driver's failure into the backend's exception, given "could not connect to " + name
     * @return the connection, which the caller closes
     * @throws LockBackendException naming {@code name} and the reason, if no connection came in time
     */
    public static Connection open(
            Connector connector,
            long timeoutNanos,
            String name,
            String threadName,
            BiFunction<String, SQLException, LockBackendException> failure) {
        AtomicBoolean taken = new AtomicBoolean();
        FutureTask<Connection> task = new FutureTask<>(() -> {
            Connection c = connector.connect();
            if (!taken.compareAndSet(false, true)) {
                closeQuietly(c); // the caller gave up on it
                return null;
            }
            return c;
        });
        Thread t = new Thread(task, threadName);
        t.setDaemon(true);
        t.start();
        boolean interrupted = false;
        long deadline = System.nanoTime() + timeoutNanos;
        try {
            while (true) {
                try {
                    return task.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true; // the deadline bounds the wait anyway
                } catch (TimeoutException e) {
                    if (taken.compareAndSet(false, true)) {
                        throw new LockBackendException("could not connect to " + name + " within the timeout ("
                                + TimeUnit.NANOSECONDS.toMillis(timeoutNanos)
                                + " ms): the server did not answer (stopped, or a network that drops packets?)");
                    }
                    // connected in the same instant: the connection is ours after all
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause();
                    if (cause instanceof SQLException sql) {
                        throw failure.apply("could not connect to " + name, sql);
                    }
                    if (cause instanceof LockBackendException lbe) {
                        throw lbe;
                    }
                    throw new LockBackendException(
                            "could not connect to " + name + ": " + Failures.reason(cause), cause);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void closeQuietly(Connection c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (SQLException | RuntimeException e) {
            // nobody waits for it any more
        }
    }
}
