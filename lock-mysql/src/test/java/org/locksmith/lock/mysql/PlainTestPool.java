package org.locksmith.lock.mysql;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * A deliberately plain pool, like many an application has: it lends its physical connections as they are (it does
 * not reset autocommit, isolation, network timeout or session variables on return), and it answers {@link
 * Connection#isValid} from local state instead of asking the server. The lock backend must cope with both.
 */
final class PlainTestPool implements DataSource, AutoCloseable {
    private final BlockingQueue<Connection> idle;
    private final List<Connection> all = new CopyOnWriteArrayList<>();

    PlainTestPool(String lockUrl, int size) throws SQLException {
        idle = new ArrayBlockingQueue<>(size);
        for (int i = 0; i < size; i++) {
            Connection c = MySqlTestServer.connect(lockUrl);
            all.add(c);
            idle.add(c);
        }
    }

    /** The physical connections, to inspect the settings they are returned with. */
    List<Connection> physical() {
        return all;
    }

    @Override
    public Connection getConnection() throws SQLException {
        Connection physical;
        try {
            physical = idle.poll(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLException("interrupted while waiting for a connection", e);
        }
        if (physical == null) {
            throw new SQLException("PlainTestPool: no connection free within 5 s", "08001");
        }
        return lend(physical);
    }

    private Connection lend(Connection physical) {
        boolean[] returned = {false};
        return (Connection) Proxy.newProxyInstance(
                Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "close":
                            if (!returned[0]) {
                                returned[0] = true;
                                if (physical.isClosed()) {
                                    all.remove(physical);
                                } else {
                                    idle.add(physical);
                                }
                            }
                            return null;
                        case "isClosed":
                            return returned[0] || physical.isClosed();
                        case "isValid":
                            return !physical.isClosed(); // local state only, as some pools do
                        case "equals":
                            return proxy == args[0];
                        case "hashCode":
                            return System.identityHashCode(proxy);
                        default:
                            try {
                                return method.invoke(physical, args);
                            } catch (InvocationTargetException e) {
                                throw e.getCause();
                            }
                    }
                });
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return getConnection();
    }

    @Override
    public PrintWriter getLogWriter() {
        return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {}

    @Override
    public void setLoginTimeout(int seconds) {}

    @Override
    public int getLoginTimeout() {
        return 0;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        throw new SQLFeatureNotSupportedException();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        throw new SQLException("not a wrapper");
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
        return false;
    }

    @Override
    public void close() {
        for (Connection c : all) {
            try {
                c.close();
            } catch (SQLException e) {
                // closing anyway
            }
        }
    }
}
