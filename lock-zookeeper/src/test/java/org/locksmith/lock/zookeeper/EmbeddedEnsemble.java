package org.locksmith.lock.zookeeper;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.zookeeper.client.FourLetterWordMain;
import org.apache.zookeeper.common.X509Exception;

/**
 * A private three-server ensemble in this JVM (curator-test {@link TestingCluster}) with a 200 ms tick: sessions of
 * 0.4 to 4 s are accepted, followers sync within 1 s and a new leader is elected within about a second.
 */
final class EmbeddedEnsemble implements AutoCloseable {
    static final int TICK_MS = 200;

    private final TestingCluster cluster;

    EmbeddedEnsemble() {
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

    String connectString() {
        return cluster.getConnectString();
    }

    /** The server that is leader right now, asked with the {@code srvr} four-letter word; empty during an election. */
    Optional<InstanceSpec> leader() {
        for (InstanceSpec spec : cluster.getInstances()) {
            if (srvr(spec).contains("Mode: leader")) {
                return Optional.of(spec);
            }
        }
        return Optional.empty();
    }

    /** True when every running server serves (is leader or follower). */
    boolean serving(List<InstanceSpec> running) {
        for (InstanceSpec spec : running) {
            String answer = srvr(spec);
            if (!answer.contains("Mode: leader") && !answer.contains("Mode: follower")) {
                return false;
            }
        }
        return true;
    }

    List<InstanceSpec> instances() {
        return new ArrayList<>(cluster.getInstances());
    }

    void kill(InstanceSpec spec) throws Exception {
        if (!cluster.killServer(spec)) {
            throw new IllegalStateException("no server " + spec);
        }
    }

    void restart(InstanceSpec spec) throws Exception {
        if (!cluster.restartServer(spec)) {
            throw new IllegalStateException("no server " + spec);
        }
    }

    /** Requests all servers have received from clients so far (pings included), from {@code srvr}. */
    long requestsReceived() {
        long total = 0;
        for (InstanceSpec spec : cluster.getInstances()) {
            for (String line : srvr(spec).split("\n")) {
                if (line.startsWith("Received:")) {
                    total += Long.parseLong(line.substring("Received:".length()).trim());
                }
            }
        }
        return total;
    }

    private static String srvr(InstanceSpec spec) {
        try {
            return FourLetterWordMain.send4LetterWord("127.0.0.1", spec.getPort(), "srvr", false, 1000);
        } catch (IOException | X509Exception.SSLContextException e) {
            return "";
        }
    }

    @Override
    public void close() throws IOException {
        cluster.close();
    }
}
