package org.locksmith.lock.testservers;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.curator.test.ZooKeeperServerEmbeddedAdapter;
import org.apache.zookeeper.client.FourLetterWordMain;
import org.apache.zookeeper.common.X509Exception;
import org.apache.zookeeper.server.DataNode;
import org.apache.zookeeper.server.ZooKeeperServer;

/**
 * A private in-process ZooKeeper server (curator-test) on a free port of 127.0.0.1, for tests that restart it, stop
 * it or read its statistics (every four-letter word is allowed); {@link #close()} stops it.
 *
 * <p>It runs with a 100 ms tick so that the 2 s session timeout of the tests is accepted (a server grants 2 to 20
 * ticks), and with the container reaper checking every {@value #CONTAINER_CHECK_MS} ms instead of every minute, so
 * that the cleanup test sees empty lock parents go within seconds. Both settings are JVM-wide system properties read
 * when a server starts.
 */
public final class EmbeddedZooKeeper implements AutoCloseable {
    /** The server's tick: it grants session timeouts of 2 to 20 ticks. */
    public static final int TICK_MS = 100;
    /** How often, by default, the server deletes container nodes left empty. */
    public static final int CONTAINER_CHECK_MS = 500;

    private static final ReentrantLock STARTING = new ReentrantLock();

    private final InstanceSpec spec;
    private final int containerCheckMs;
    private volatile TestingServer server;

    static {
        configureServers();
    }

    /**
     * Sets the JVM-wide server-side system properties of these servers: the container reaper's interval, every
     * four-letter word allowed, no admin web server. Runs before any of these servers starts, also an ensemble.
     */
    static void configureServers() {
        System.setProperty("znode.container.checkIntervalMs", String.valueOf(CONTAINER_CHECK_MS));
        System.setProperty("zookeeper.4lw.commands.whitelist", "*");
        System.setProperty("zookeeper.admin.enableServer", "false");
    }

    /**
     * Starts a server whose container reaper runs every {@value #CONTAINER_CHECK_MS} ms.
     *
     * @throws IllegalStateException if it cannot start
     */
    public EmbeddedZooKeeper() {
        this(CONTAINER_CHECK_MS);
    }

    /**
     * Starts a server whose container reaper runs every {@code containerCheckMs} (a minute is ZooKeeper's default).
     *
     * @param containerCheckMs the reaper's interval
     * @throws IllegalStateException if it cannot start
     */
    public EmbeddedZooKeeper(int containerCheckMs) {
        this(containerCheckMs, Map.of());
    }

    /**
     * A server that grants sessions of up to {@code maxSessionTimeoutMs} (20 ticks, 2 s, by default), for tests
     * whose outages must be longer than a connection timeout and still shorter than the session.
     *
     * @param maxSessionTimeoutMs the longest session the server grants
     * @return the running server
     * @throws IllegalStateException if it cannot start
     */
    public static EmbeddedZooKeeper withMaxSessionTimeout(int maxSessionTimeoutMs) {
        return new EmbeddedZooKeeper(
                CONTAINER_CHECK_MS, Map.of("maxSessionTimeout", String.valueOf(maxSessionTimeoutMs)));
    }

    private EmbeddedZooKeeper(int containerCheckMs, Map<String, Object> serverProperties) {
        this.containerCheckMs = containerCheckMs;
        try {
            File dir = Files.createTempDirectory("locksmith-zk").toFile();
            this.spec = new InstanceSpec(
                    dir, InstanceSpec.getRandomPort(), -1, -1, true, -1, TICK_MS, -1, serverProperties, "127.0.0.1");
            this.server = start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private TestingServer start() {
        STARTING.lock();
        try {
            // The reaper reads its interval when the server starts, from a JVM-wide property: set it just for this
            // start, under a lock, and put the default of these tests back.
            System.setProperty("znode.container.checkIntervalMs", String.valueOf(containerCheckMs));
            return new TestingServer(spec, true);
        } catch (Exception e) {
            throw new IllegalStateException(
                    "Could not start the embedded ZooKeeper (curator-test) on port " + spec.getPort() + ": " + e, e);
        } finally {
            System.setProperty("znode.container.checkIntervalMs", String.valueOf(CONTAINER_CHECK_MS));
            STARTING.unlock();
        }
    }

    /**
     * The server's port on 127.0.0.1; it stays the same across {@link #restart()} and {@link #stop()}.
     *
     * @return the port
     */
    public int port() {
        return spec.getPort();
    }

    /**
     * The server's address for ZooKeeper clients.
     *
     * @return {@code 127.0.0.1:PORT}
     */
    public String connectString() {
        return "127.0.0.1:" + spec.getPort();
    }

    /**
     * A Locksmith lock URL for this server.
     *
     * @param root the chroot of the locks, starting with {@code /}
     * @param sessionTimeoutMs the session timeout to ask for
     * @param connectionTimeoutMs the connection timeout
     * @return {@code zookeeper://127.0.0.1:PORT<root>?sessionTimeoutMs=...&connectionTimeoutMs=...}
     */
    public String url(String root, long sessionTimeoutMs, long connectionTimeoutMs) {
        return "zookeeper://" + connectString() + root + "?sessionTimeoutMs=" + sessionTimeoutMs
                + "&connectionTimeoutMs=" + connectionTimeoutMs;
    }

    /**
     * Crash-restarts the server on the same port and data directory (nothing acknowledged is lost).
     *
     * @throws IllegalStateException if it cannot restart
     */
    public void restart() {
        try {
            server.restart();
        } catch (Exception e) {
            throw new IllegalStateException("Could not restart the embedded ZooKeeper: " + e, e);
        }
    }

    /**
     * Stops the server until the returned handle is closed. A stopped {@link TestingServer} cannot start again on
     * its port, so the outage ends with a new server on the same port and data directory.
     *
     * @return the handle whose {@code close()} starts the server again
     * @throws UncheckedIOException if the server cannot be stopped
     */
    public AutoCloseable stop() {
        try {
            server.stop();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return () -> server = start();
    }

    /**
     * Sets the child version of the node at {@code path}, from which the server numbers the next sequential child,
     * as if that many children had been created and deleted under it: a test reaches the counter's wrap at
     * 2<sup>31</sup> without 2<sup>31</sup> round trips. No client API can do this, so it reaches into curator-test's
     * and ZooKeeper's server classes; an upgrade that renames them fails here, loudly.
     *
     * @param path the node's path
     * @param cversion the child version to set
     * @throws IllegalStateException if there is no such node or the server's classes cannot be reached
     */
    public void setChildVersion(String path, int cversion) {
        try {
            Object testingServer = call(server, TestingServer.class, "getTestingZooKeeperServer");
            Object main = call(testingServer, testingServer.getClass(), "getMain");
            // curator-test runs ZooKeeper's embedded server when it is on the class path, its own main otherwise
            ZooKeeperServer zk = main instanceof ZooKeeperServerEmbeddedAdapter adapter
                    ? adapter.getServerCnxnFactory().getZooKeeperServer()
                    : (ZooKeeperServer) call(main, main.getClass(), "getZkServer");
            DataNode node = zk.getZKDatabase().getDataTree().getNode(path);
            if (node == null) {
                throw new IllegalStateException("No node " + path + " on the embedded ZooKeeper");
            }
            synchronized (node) {
                node.stat.setCversion(cversion);
            }
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(
                    "Could not reach the embedded ZooKeeper's data tree (curator-test or ZooKeeper changed): " + e, e);
        }
    }

    private static Object call(Object target, Class<?> type, String method) throws ReflectiveOperationException {
        Method m = type.getDeclaredMethod(method);
        m.setAccessible(true);
        return m.invoke(target);
    }

    /** The answer of a four-letter word such as {@code srvr}, sent with ZooKeeper's own client. */
    static String fourLetterWord(int port, String word, int timeoutMs) {
        try {
            return FourLetterWordMain.send4LetterWord("127.0.0.1", port, word, false, timeoutMs);
        } catch (IOException e) {
            throw new UncheckedIOException("four-letter word " + word + " failed", e);
        } catch (X509Exception.SSLContextException e) {
            throw new IllegalStateException("four-letter word " + word + " failed", e);
        }
    }

    /**
     * Requests the server has received from clients so far (pings included), from {@code srvr}, which counts
     * itself too.
     *
     * @return the count
     * @throws UncheckedIOException if the server does not answer
     */
    public long requestsReceived() {
        return requestsReceived(fourLetterWord(spec.getPort(), "srvr", 2000));
    }

    /** The {@code Received:} count of an answer to {@code srvr}. */
    static long requestsReceived(String srvr) {
        for (String line : srvr.split("\n")) {
            if (line.startsWith("Received:")) {
                return Long.parseLong(line.substring("Received:".length()).trim());
            }
        }
        throw new IllegalStateException("srvr gave no 'Received:' line");
    }

    /**
     * Stops the server.
     *
     * @throws IOException if it cannot be stopped
     */
    @Override
    public void close() throws IOException {
        server.close();
    }
}
