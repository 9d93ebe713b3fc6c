package org.locksmith.lock.redis;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.locksmith.lock.testservers.PrivateRedis;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;

/**
 * A Sentinel-managed pair the test starts itself: a master and a replica ({@link PrivateRedis}, free ports, no
 * persistence) and one sentinel ({@code redis-server --sentinel}, which is what Debian's {@code redis-sentinel}
 * runs) with quorum 1, a master declared down after 1 s, and a failover timeout of 5 s. Bound to 127.0.0.1.
 */
final class PrivateRedisSentinel implements AutoCloseable {
    static final String MASTER_NAME = "locksmith-test";

    private final PrivateRedis first;
    private final PrivateRedis second;
    private final int sentinelPort;
    private final Path sentinelDir;
    private Process sentinel;

    private PrivateRedisSentinel(PrivateRedis first, PrivateRedis second, int sentinelPort, Path sentinelDir) {
        this.first = first;
        this.second = second;
        this.sentinelPort = sentinelPort;
        this.sentinelDir = sentinelDir;
    }

    /** Starts master, replica and sentinel, and waits until the sentinel knows the replica and it is in sync. */
    static PrivateRedisSentinel start() {
        PrivateRedis master = PrivateRedis.start();
        PrivateRedis replica = null;
        PrivateRedisSentinel pair = null;
        try {
            replica = PrivateRedis.start("--replicaof", "127.0.0.1", Integer.toString(master.port()));
            pair = new PrivateRedisSentinel(
                    master, replica, PrivateRedis.freePort(), Files.createTempDirectory("locksmith-sentinel-"));
            pair.startSentinel(master.port());
            pair.awaitSettled();
            return pair;
        } catch (IOException | RuntimeException e) {
            if (pair != null) {
                pair.close();
            } else {
                master.close();
                if (replica != null) {
                    replica.close();
                }
            }
            throw new IllegalStateException("Could not start a private Sentinel setup: " + e.getMessage(), e);
        }
    }

    private void startSentinel(int masterPort) throws IOException {
        Path conf = sentinelDir.resolve("sentinel.conf");
        Files.writeString(
                conf,
                String.join(
                        "\n",
                        "port " + sentinelPort,
                        "bind 127.0.0.1",
                        "dir " + sentinelDir,
                        "sentinel monitor " + MASTER_NAME + " 127.0.0.1 " + masterPort + " 1",
                        "sentinel down-after-milliseconds " + MASTER_NAME + " 1000",
                        "sentinel failover-timeout " + MASTER_NAME + " 5000",
                        "sentinel parallel-syncs " + MASTER_NAME + " 1",
                        ""),
                StandardCharsets.UTF_8);
        sentinel = new ProcessBuilder(PrivateRedis.binary(), conf.toString(), "--sentinel")
                .redirectErrorStream(true)
                .redirectOutput(sentinelDir.resolve("sentinel.log").toFile())
                .start();
    }

    /** Waits until the sentinel sees one master and one replica that is in sync with it. */
    void awaitSettled() {
        await("the sentinel on port " + sentinelPort + " to know a synced replica of " + MASTER_NAME)
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(50))
                .ignoreExceptions()
                .until(() -> {
                    if (!sentinel.isAlive()) {
                        throw new IllegalStateException(
                                "sentinel exited: " + Files.readString(sentinelDir.resolve("sentinel.log")));
                    }
                    try (Jedis s = sentinelConnection()) {
                        List<Map<String, String>> replicas = s.sentinelReplicas(MASTER_NAME);
                        if (replicas.size() != 1
                                || !replicas.get(0).get("flags").equals("slave")
                                || !"ok".equals(replicas.get(0).get("master-link-status"))) {
                            return false;
                        }
                    }
                    try (Jedis m = RedisTckSupport.admin(master())) {
                        return m.info("replication").contains("role:master")
                                && m.info("replication").contains("connected_slaves:1");
                    }
                });
    }

    /** The address the sentinel names as the master now. */
    HostAndPort master() {
        try (Jedis s = sentinelConnection()) {
            List<String> addr = s.sentinelGetMasterAddrByName(MASTER_NAME);
            return new HostAndPort(addr.get(0), Integer.parseInt(addr.get(1)));
        }
    }

    /**
     * {@code SENTINEL FAILOVER}: the replica is promoted and the old master made its replica (which ends its blocked
     * clients with {@code UNBLOCKED}); returns once the sentinel names the new master and that server says so.
     */
    HostAndPort failover() {
        HostAndPort before = master();
        awaitReplicated(before);
        try (Jedis s = sentinelConnection()) {
            s.sentinelFailover(MASTER_NAME);
        }
        await("the sentinel to name a new master")
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(20))
                .ignoreExceptions()
                .until(() -> {
                    HostAndPort now = master();
                    if (now.equals(before)) {
                        return false;
                    }
                    try (Jedis m = RedisTckSupport.admin(now)) {
                        return m.info("replication").contains("role:master");
                    }
                });
        return master();
    }

    /**
     * Waits until the replica has every write of the master: what this setup tests is following a failover, not
     * losing the writes that asynchronous replication had not carried yet (see the README on failover).
     */
    private void awaitReplicated(HostAndPort master) {
        await("the replica to have every write of " + master)
                .atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(10))
                .ignoreExceptions()
                .until(() -> {
                    try (Jedis m = RedisTckSupport.admin(master)) {
                        String info = m.info("replication");
                        long offset = Long.parseLong(field(info, "master_repl_offset"));
                        String replica = field(info, "slave0");
                        return replica.contains("offset=" + offset + ",");
                    }
                });
    }

    private static String field(String info, String name) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(name + ":")) {
                return line.substring(name.length() + 1).trim();
            }
        }
        throw new IllegalStateException("no " + name + " in INFO: " + info);
    }

    /** The server that is the replica now. */
    PrivateRedis replica() {
        return master().getPort() == first.port() ? second : first;
    }

    /** A {@code redis://} URL naming the sentinel and the master, with {@code params} and the restart hold-off off. */
    String url(String params) {
        return "redis://127.0.0.1:" + sentinelPort + "?sentinelMaster=" + MASTER_NAME + "&restartHoldOffMs=0"
                + (params.isEmpty() ? "" : "&" + params);
    }

    Jedis sentinelConnection() {
        return RedisTckSupport.admin(new HostAndPort("127.0.0.1", sentinelPort));
    }

    @Override
    public void close() {
        if (sentinel != null && sentinel.isAlive()) {
            sentinel.destroyForcibly();
            try {
                sentinel.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        try (var files = Files.walk(sentinelDir)) {
            files.sorted(java.util.Comparator.reverseOrder())
                    .forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a temp directory left behind
        }
        second.close();
        first.close();
    }
}
