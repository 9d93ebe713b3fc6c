package org.locksmith.lock.mysql;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLNonTransientConnectionException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * An application's data source with two test controls over a real server: session settings run on every borrowed
 * connection (a time zone, a fixed clock), and a reply lost on demand (the statement runs and commits on the server,
 * then the connection breaks before its result reaches the client, as a network failure does).
 */
final class ScriptedDataSource {
    private final DataSource target;
    private volatile Supplier<String> onBorrow = () -> null;
    private final AtomicReference<String> loseReplyTo = new AtomicReference<>();
    private final AtomicReference<String> deadlockOn = new AtomicReference<>();
    private final AtomicInteger lostReplies = new AtomicInteger();
    private final AtomicInteger lostUpdateCount = new AtomicInteger();

    ScriptedDataSource(DataSource target) {
        this.target = target;
    }

    /** Statements (one string, may be null) run on every connection as it is borrowed. */
    void onBorrow(Supplier<String> sql) {
        this.onBorrow = sql;
    }

    /** The next statement whose SQL contains {@code marker} runs, then its connection breaks before the reply. */
    void loseReplyTo(String marker) {
        loseReplyTo.set(marker);
    }

    /**
     * The next statement whose SQL contains {@code marker} fails as a deadlock victim (error 1213) without reaching
     * the server, which is what the server reports after rolling the victim back.
     */
    void deadlockOn(String marker) {
        deadlockOn.set(marker);
    }

    int lostReplies() {
        return lostReplies.get();
    }

    /** The update count the server gave the statement whose reply was lost. */
    int lostUpdateCount() {
        return lostUpdateCount.get();
    }

    DataSource dataSource() {
        return (DataSource) Proxy.newProxyInstance(
                DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    Object result = invoke(target, method, args);
                    if (method.getName().equals("getConnection")) {
                        Connection c = (Connection) result;
                        String sql = onBorrow.get();
                        if (sql != null) {
                            try (Statement s = c.createStatement()) {
                                s.execute(sql);
                            }
                        }
                        return connection(c);
                    }
                    return result;
                });
    }

    private Connection connection(Connection c) {
        return (Connection) Proxy.newProxyInstance(
                Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                    Object result = invoke(c, method, args);
                    if (method.getName().equals("prepareStatement") && args != null && args[0] instanceof String sql) {
                        return statement(c, (PreparedStatement) result, sql);
                    }
                    return result;
                });
    }

    private PreparedStatement statement(Connection c, PreparedStatement ps, String sql) {
        InvocationHandler handler = (proxy, method, args) -> {
            if (method.getName().equals("executeUpdate") && (args == null || args.length == 0)) {
                String victim = deadlockOn.get();
                if (victim != null && sql.contains(victim) && deadlockOn.compareAndSet(victim, null)) {
                    throw new java.sql.SQLTransactionRollbackException(
                            "Deadlock found when trying to get lock; try restarting transaction (test)", "40001", 1213);
                }
                String marker = loseReplyTo.get();
                if (marker != null && sql.contains(marker) && loseReplyTo.compareAndSet(marker, null)) {
                    int count = ps.executeUpdate();
                    lostUpdateCount.set(count);
                    lostReplies.incrementAndGet();
                    c.abort(Runnable::run);
                    throw new SQLNonTransientConnectionException(
                            "Communications link failure (test: the reply was lost)", "08S01");
                }
            }
            return invoke(ps, method, args);
        };
        return (PreparedStatement) Proxy.newProxyInstance(
                PreparedStatement.class.getClassLoader(), new Class<?>[] {PreparedStatement.class}, handler);
    }

    private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
