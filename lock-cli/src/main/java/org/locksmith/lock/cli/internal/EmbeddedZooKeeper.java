package org.locksmith.lock.cli.internal;

import java.io.File;
import java.util.Map;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * The demo's in-process ZooKeeper server (curator-test), on a free port of 127.0.0.1. Its 100 ms tick lets clients
 * ask for a 2 s session timeout (a server grants 2 to 20 ticks), so that a killed holder's lock passes on within
 * seconds.
 */
public final class EmbeddedZooKeeper implements AutoCloseable {
    private static final int TICK_MS = 100;

    private final TestingServer server;
    private final File dir;
    private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();

    public EmbeddedZooKeeper() {
        // No admin web server (it would take port 8080) and no JMX noise in the user's terminal.
        System.setProperty("zookeeper.admin.enableServer", "false");
        System.setProperty("zookeeper.jmx.log4j.disable", "true");
        System.setProperty("zookeeper.4lw.commands.whitelist", "srvr,ruok");
        dir = TempDirs.create("locksmith-demo-zk").toFile();
        try {
            InstanceSpec spec = new InstanceSpec(
                    dir, InstanceSpec.getRandomPort(), -1, -1, true, -1, TICK_MS, -1, Map.of(), "127.0.0.1");
            server = new TestingServer(spec, true);
        } catch (Exception e) {
            TempDirs.delete(dir.toPath());
            throw new IllegalStateException("could not start the in-process ZooKeeper server: " + e.getMessage(), e);
        }
    }

    /** {@code 127.0.0.1:port}. */
    public String connectString() {
        return "127.0.0.1:" + server.getPort();
    }

    /** Stops the server and deletes its data; idempotent. */
    @Override
    public void close() {
        if (closed.getAndSet(true)) {
            return;
        }
        try {
            server.close();
        } catch (Exception e) {
            // best effort: the process is ending
        } finally {
            TempDirs.delete(dir.toPath());
        }
    }
}
