package org.locksmith.lock.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import redis.clients.jedis.Jedis;

/**
 * The round-trip floor of each store from Java, in the same run as the locks: Redis {@code PING} and {@code EVALSHA}
 * of a script that returns 1 (Jedis), MySQL {@code SELECT 1} (Connector/J), PostgreSQL {@code SELECT 1} (pgJDBC),
 * ZooKeeper {@code exists} (Curator). One thread, one connection, measured after a warm-up.
 */
final class Floors {
    private interface RoundTrip {
        void run() throws Exception;
    }

    private Floors() {}

    static List<Results.Floor> measure(Stores stores, BenchPlan plan) throws Exception {
        Results.Floor ping;
        try (Jedis jedis = stores.redis()) {
            ping = floor(StoreKind.REDIS, "PING", plan, jedis::ping);
        }
        return List.of(
                ping, evalsha(stores, plan), select(stores, plan), postgresSelect(stores, plan), exists(stores, plan));
    }

    /** The natural operation each store's figures are read against. */
    static String naturalOperation(StoreKind store) {
        return switch (store) {
            case REDIS -> "EVALSHA";
            case MYSQL, POSTGRES -> "SELECT 1";
            case ZOOKEEPER -> "exists";
        };
    }

    /** {@code store}'s natural floor ({@link #naturalOperation}), measured now. */
    static Results.Floor natural(StoreKind store, Stores stores, BenchPlan plan) throws Exception {
        return switch (store) {
            case REDIS -> evalsha(stores, plan);
            case MYSQL -> select(stores, plan);
            case POSTGRES -> postgresSelect(stores, plan);
            case ZOOKEEPER -> exists(stores, plan);
        };
    }

    private static Results.Floor evalsha(Stores stores, BenchPlan plan) throws Exception {
        try (Jedis jedis = stores.redis()) {
            String sha = jedis.scriptLoad("return 1");
            return floor(StoreKind.REDIS, "EVALSHA", plan, () -> jedis.evalsha(sha, 0));
        }
    }

    private static Results.Floor select(Stores stores, BenchPlan plan) throws Exception {
        try (Connection c = stores.mysqlConnection();
                PreparedStatement ps = c.prepareStatement("SELECT 1")) {
            return floor(StoreKind.MYSQL, "SELECT 1", plan, () -> {
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                }
            });
        }
    }

    private static Results.Floor postgresSelect(Stores stores, BenchPlan plan) throws Exception {
        try (Connection c = stores.postgresConnection();
                PreparedStatement ps = c.prepareStatement("SELECT 1")) {
            return floor(StoreKind.POSTGRES, "SELECT 1", plan, () -> {
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                }
            });
        }
    }

    private static Results.Floor exists(Stores stores, BenchPlan plan) throws Exception {
        try (CuratorFramework curator =
                CuratorFrameworkFactory.newClient(stores.zookeeperConnect(), 30_000, 5_000, new RetryOneTime(100))) {
            curator.start();
            if (!curator.blockUntilConnected(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("ZooKeeper at " + stores.zookeeperConnect() + " did not connect");
            }
            return floor(
                    StoreKind.ZOOKEEPER,
                    "exists",
                    plan,
                    () -> curator.checkExists().forPath("/zookeeper"));
        }
    }

    private static Results.Floor floor(StoreKind store, String operation, BenchPlan plan, RoundTrip roundTrip)
            throws Exception {
        for (int i = 0; i < plan.floorSamples() / 4; i++) {
            roundTrip.run();
        }
        Histogram histogram = new Histogram(3);
        for (int i = 0; i < plan.floorSamples(); i++) {
            long start = System.nanoTime();
            roundTrip.run();
            histogram.recordValue(System.nanoTime() - start);
        }
        return new Results.Floor(
                store, operation, histogram.getValueAtPercentile(50) / 1e3, histogram.getValueAtPercentile(99) / 1e3);
    }
}
