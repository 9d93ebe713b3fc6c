package org.locksmith.lock.redis;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.locksmith.lock.testservers.PrivateRedis;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;

/**
 * A Redis Cluster of three masters (no replicas) that the test starts from the {@code redis-server} binary on
 * free loopback ports, joined with CLUSTER ADDSLOTS and CLUSTER MEET. Starts in about a second; {@link #close()}
 * stops every node.
 */
final class PrivateRedisCluster implements AutoCloseable {
    private final List<PrivateRedis> nodes = new ArrayList<>();
    private PrivateRedis replica;

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
     * A cluster as {@link #start()} plus a fourth node, a replica of the first master ({@code CLUSTER REPLICATE}),
     * in sync and known as that replica by every master when this returns: for {@link #failOverFirstMaster()}.
     */
    static PrivateRedisCluster startWithReplicaOfFirst() {
        PrivateRedisCluster cluster = start();
        try {
            cluster.replica = PrivateRedis.start(
                    "--cluster-enabled", "yes",
                    "--cluster-config-file", "nodes.conf",
                    "--cluster-node-timeout", "5000");
            String firstId;
            try (Jedis first = cluster.nodes.get(0).jedis()) {
                firstId = first.clusterMyId();
                first.clusterMeet("127.0.0.1", cluster.replica.port());
            }
            await("the fourth node to know the first master")
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> {
                        try (Jedis r = cluster.replica.jedis()) {
                            return r.clusterNodes().contains(firstId);
                        }
                    });
            try (Jedis r = cluster.replica.jedis()) {
                r.clusterReplicate(firstId);
            }
            await("the replica to be in sync with the first master")
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> {
                        try (Jedis r = cluster.replica.jedis()) {
                            String info = r.info("replication");
                            return info.contains("master_link_status:up")
                                    && r.clusterInfo().contains("cluster_state:ok");
                        }
                    });
            // A replica wins a failover election only with the votes of a majority of the masters, and a master
            // votes only for a node it knows as a replica of the failing master: wait until gossip has told all.
            String replicaId;
            try (Jedis r = cluster.replica.jedis()) {
                replicaId = r.clusterMyId();
            }
            await("every master to know the fourth node as the first master's replica")
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> cluster.nodes.stream().allMatch(n -> {
                        try (Jedis j = n.jedis()) {
                            return j.clusterNodes()
                                    .lines()
                                    .anyMatch(line -> line.startsWith(replicaId + " ")
                                            && line.contains("slave")
                                            && line.contains(" " + firstId + " "));
                        }
                    }));
            return cluster;
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    /**
     * {@code CLUSTER FAILOVER} on the replica of the first master: the replica takes over its slots and the old
     * master becomes its replica (which ends its blocked clients with {@code UNBLOCKED}). Returns once the new
     * master serves and every node sees a healthy cluster.
     */
    void failOverFirstMaster() {
        try (Jedis r = replica.jedis()) {
            r.clusterFailover();
        }
        await("the replica to take over the first master's slots")
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> {
                    try (Jedis r = replica.jedis()) {
                        return r.info("replication").contains("role:master")
                                && r.clusterInfo().contains("cluster_state:ok");
                    }
                });
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
        if (replica != null) {
            replica.close();
        }
    }
}
