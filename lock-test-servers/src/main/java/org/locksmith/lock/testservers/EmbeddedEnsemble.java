package org.locksmith.lock.testservers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;

/**
 * A private three-server ensemble in this JVM (curator-test {@link TestingCluster}) with a 200 ms tick: sessions of
 * 0.4 to 4 s are accepted, followers sync within 1 s and a new leader is elected within about a second. Tests may
 * kill and restart its servers; {@link #close()} stops them all.
 */
public final class EmbeddedEnsemble implements AutoCloseable {
    /** The servers' tick: they grant session timeouts of 2 to 20 ticks. */
    public static final int TICK_MS = 200;

    private final TestingCluster cluster;

    /**
     * Starts the three servers on free ports of 127.0.0.1.
     *
     * @throws IllegalStateException if they cannot start
     */
    public EmbeddedEnsemble() {
        EmbeddedZooKeeper.configureServers();
        List<InstanceSpec> specs = new ArrayList<>();
        for (int id = 1; id <= 3; id++) {
            specs.add(new InstanceSpec(
                    null,
                    InstanceSpec.getRandomPort(),
                    InstanceSpec.getRandomPort(),
                    InstanceSpec.getRandomPort(),
                    true,
                    id,
                    TICK_MS,
                    -1,
                    Map.of(),
                    "127.0.0.1"));
        }
        cluster = new TestingCluster(specs);
        try {
            cluster.start();
        } catch (Exception e) {
            throw new IllegalStateException("Could not start the embedded ZooKeeper ensemble (curator-test): " + e, e);
        }
    }

    /**
     * The servers' addresses for ZooKeeper clients.
     *
     * @return {@code host:port,host:port,host:port}
     */
    public String connectString() {
        return cluster.getConnectString();
    }

    /**
     * The server that is leader right now, asked with the {@code srvr} four-letter word.
     *
     * @return the leader, or empty during an election
     */
    public Optional<InstanceSpec> leader() {
        for (InstanceSpec spec : cluster.getInstances()) {
            if (srvr(spec).contains("Mode: leader")) {
                return Optional.of(spec);
            }
        }
        return Optional.empty();
    }

    /**
     * Whether every server of {@code running} serves (is leader or follower).
     *
     * @param running the servers expected to run
     * @return true when each of them answers {@code srvr} as leader or follower
     */
    public boolean serving(List<InstanceSpec> running) {
        for (InstanceSpec spec : running) {
            String answer = srvr(spec);
            if (!answer.contains("Mode: leader") && !answer.contains("Mode: follower")) {
                return false;
            }
        }
        return true;
    }

    /**
     * The three servers, running or not.
     *
     * @return a copy of their specs
     */
    public List<InstanceSpec> instances() {
        return new ArrayList<>(cluster.getInstances());
    }

    /**
     * Kills one server (it drops its connections at once).
     *
     * @param spec one of {@link #instances()}
     * @throws Exception if curator-test cannot kill it
     */
    public void kill(InstanceSpec spec) throws Exception {
        if (!cluster.killServer(spec)) {
            throw new IllegalStateException("no server " + spec);
        }
    }

    /**
     * Starts a killed server again, with its data.
     *
     * @param spec one of {@link #instances()}
     * @throws Exception if curator-test cannot restart it
     */
    public void restart(InstanceSpec spec) throws Exception {
        if (!cluster.restartServer(spec)) {
            throw new IllegalStateException("no server " + spec);
        }
    }

    /**
     * Requests the running servers have received from clients so far (pings included), from {@code srvr}.
     *
     * @return the sum over the servers that answer
     */
    public long requestsReceived() {
        long total = 0;
        for (InstanceSpec spec : cluster.getInstances()) {
            String answer = srvr(spec);
            if (answer.contains("Received:")) { // a server that is not serving answers without statistics
                total += EmbeddedZooKeeper.requestsReceived(answer);
            }
        }
        return total;
    }

    /** The server's answer to {@code srvr}, empty if it does not answer (killed, or electing). */
    private static String srvr(InstanceSpec spec) {
        try {
            return EmbeddedZooKeeper.fourLetterWord(spec.getPort(), "srvr", 1000);
        } catch (UncheckedIOException | IllegalStateException e) {
            return "";
        }
    }

    /**
     * Stops every server.
     *
     * @throws IOException if they cannot be stopped
     */
    @Override
    public void close() throws IOException {
        cluster.close();
    }
}
