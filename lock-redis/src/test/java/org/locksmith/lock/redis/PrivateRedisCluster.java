package org.locksmith.lock.redis;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;

/**
 * A Redis Cluster of three masters (no replicas) that the test starts from the {@code redis-server} binary on
 * free loopback ports, joined with CLUSTER ADDSLOTS and CLUSTER MEET. Starts in about a second; {@link #close()}
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

    /**
     * Joins the nodes by hand, as {@code redis-cli --cluster create} would (which is not always installed): distinct
     * config epochs, a third of the slots each, then CLUSTER MEET, then wait until every node sees a healthy cluster.
     */
    private void create() {
        int perNode = 16384 / nodes.size();
        for (int i = 0; i < nodes.size(); i++) {
            int from = i * perNode;
            int to = i == nodes.size() - 1 ? 16383 : from + perNode - 1;
            int[] slots = new int[to - from + 1];
            for (int s = 0; s < slots.length; s++) {
                slots[s] = from + s;
            }
            try (Jedis j = nodes.get(i).jedis()) {
                j.clusterSetConfigEpoch(i + 1);
                j.clusterAddSlots(slots);
            }
        }
        try (Jedis first = nodes.get(0).jedis()) {
            for (int i = 1; i < nodes.size(); i++) {
                first.clusterMeet("127.0.0.1", nodes.get(i).port());
            }
        }
        await("cluster of " + nodes.size() + " masters to be ok on every node")
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> nodes.stream().allMatch(n -> {
                    try (Jedis j = n.jedis()) {
                        String info = j.clusterInfo();
                        return info.contains("cluster_state:ok")
                                && info.contains("cluster_slots_ok:16384")
                                && info.contains("cluster_known_nodes:" + nodes.size());
                    }
                }));
    }

    Set<HostAndPort> hostAndPorts() {
        return nodes.stream()
                .map(PrivateRedis::hostAndPort)
                .collect(Collectors.toCollection(java.util.LinkedHashSet::new));
    }

    List<HostAndPort> nodeList() {
        return List.copyOf(hostAndPorts());
    }

    /** The {@code i}th master; node {@code i} owns the {@code i}th third of the slots. */
    PrivateRedis node(int i) {
        return nodes.get(i);
    }

    /** A cluster URL: every node as a seed. */
    String url() {
        return "redis://" + nodes.stream().map(n -> "127.0.0.1:" + n.port()).collect(Collectors.joining(","))
                + "?cluster=true&restartHoldOffMs=0";
    }

    @Override
    public void close() {
        for (PrivateRedis node : nodes) {
            node.close();
        }
    }
}
