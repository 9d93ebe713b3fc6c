package org.locksmith.lock.redis;

import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;

/**
 * A Redis Cluster of three masters (no replicas) that the test starts from the {@code redis-server} binary on
 * free loopback ports, joined with {@code redis-cli --cluster create}. Starts in about a second; {@link #close()}
 * stops every node.
 */
final class PrivateRedisCluster implements AutoCloseable {
    private final List<PrivateRedis> nodes = new ArrayList<>();

    static PrivateRedisCluster start() {
        PrivateRedisCluster cluster = new PrivateRedisCluster();
        try {
            for (int i = 0; i < 3; i++) {
                cluster.nodes.add(PrivateRedis.start(
                        "--cluster-enabled", "yes",
                        "--cluster-config-file", "nodes.conf",
                        "--cluster-node-timeout", "5000"));
            }
            cluster.create();
            return cluster;
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    private void create() {
        List<String> cmd = new ArrayList<>(List.of(cli(), "--cluster", "create"));
        for (PrivateRedis node : nodes) {
            cmd.add("127.0.0.1:" + node.port());
        }
        cmd.addAll(List.of("--cluster-replicas", "0", "--cluster-yes"));
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException(
                        "redis-cli --cluster create failed: " + new String(out, StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            throw new IllegalStateException("Could not run " + cmd, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        await("cluster of " + nodes.size() + " masters to be ok on every node")
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> nodes.stream().allMatch(n -> {
                    try (Jedis j = n.jedis()) {
                        return j.clusterInfo().contains("cluster_state:ok")
                                && j.clusterInfo().contains("cluster_slots_ok:16384")
                                && j.clusterNodes().lines().count() == nodes.size();
                    }
                }));
    }

    private static String cli() {
        File server = new File(PrivateRedis.binary());
        File cli = new File(server.getParentFile(), "redis-cli");
        if (!cli.canExecute()) {
            throw new IllegalStateException("The cluster test needs redis-cli next to " + server
                    + " (it ships with redis-server: apt-get install redis-tools / redis-server)");
        }
        return cli.getPath();
    }

    Set<HostAndPort> hostAndPorts() {
        return nodes.stream()
                .map(PrivateRedis::hostAndPort)
                .collect(Collectors.toCollection(java.util.LinkedHashSet::new));
    }

    List<HostAndPort> nodeList() {
        return List.copyOf(hostAndPorts());
    }

    /** A cluster URL: every node as a seed. */
    String url() {
        return "redis://" + nodes.stream().map(n -> "127.0.0.1:" + n.port()).collect(Collectors.joining(","))
                + "?cluster=true";
    }

    @Override
    public void close() {
        for (PrivateRedis node : nodes) {
            node.close();
        }
    }
}
