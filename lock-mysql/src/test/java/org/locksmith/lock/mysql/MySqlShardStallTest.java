package org.locksmith.lock.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.mysql.internal.MySqlLockBackend;
import org.locksmith.lock.spi.LockUrl;
import org.locksmith.lock.testsupport.StallingProxy;

/**
 * One stalled shard costs only its own leases: the session checks of a healthy shard go on at their pace, so its
 * leases stay valid, while the stalled shard's round lasts about one {@code timeoutMs} however many leases it holds.
 */
class MySqlShardStallTest {
    private static String stalledDb;
    private static String healthyDb;

    @BeforeAll
    static void databases() {
        stalledDb = MySqlTestServer.privateDatabaseUrl("stall1");
        healthyDb = MySqlTestServer.privateDatabaseUrl("stall2");
    }

    @AfterAll
    static void dropDatabases() {
        MySqlTestServer.dropDatabase(stalledDb);
        MySqlTestServer.dropDatabase(healthyDb);
    }

    @ParameterizedTest
    @EnumSource(
            value = MySqlStrategy.class,
            names = {"ROW", "NAMED"})
    void aStalledShardDoesNotDelayTheSessionChecksOfAHealthyOne(MySqlStrategy strategy) throws Exception {
        LockUrl server = LockUrl.parse(stalledDb);
        LockUrl.HostAndPort host = server.hosts().get(0);
        String user = server.user().orElse("root");
        try (StallingProxy proxy = new StallingProxy(host.port(3306))) {
            // shard 1 through the proxy, shard 2 direct; 3 s session timeout, checks every 200 ms, 500 ms timeout
            String url = "mysql://" + user + "@127.0.0.1:" + proxy.port() + "," + host.host() + ":" + host.port(3306)
                    + "/" + server.path() + "," + LockUrl.parse(healthyDb).path() + "?strategy="
                    + strategy.urlValue() + "&checkIntervalMs=200&sessionTimeoutMs=3000&timeoutMs=500&table="
                    + MySqlTestServer.uniqueTable("stall");
            try (LockClient client = MySqlTckSupport.open(url)) {
                MySqlLockBackend backend = MySqlTckSupport.backendOf(client);
                List<LockLease> onStalled = new ArrayList<>();
                LockLease onHealthy = null;
                for (int i = 0; onStalled.size() < 8 || onHealthy == null; i++) {
                    String key = "stall:" + i;
                    boolean stalledShard = backend.shardFor(key).name().contains(":" + proxy.port() + "/");
                    if (stalledShard && onStalled.size() < 8) {
                        onStalled.add(client.lock(key).acquire(Duration.ofSeconds(5)));
                    } else if (!stalledShard && onHealthy == null) {
                        onHealthy = client.lock(key).acquire(Duration.ofSeconds(5));
                    }
                }
                proxy.stall();
                LockLease healthy = onHealthy;
                // longer than the session timeout
                org.awaitility.Awaitility.await()
                        .during(Duration.ofSeconds(4))
                        .atMost(Duration.ofSeconds(6))
                        .pollInterval(Duration.ofMillis(20))
                        .until(healthy::isValid);
                long t0 = System.nanoTime();
                onHealthy.release();
                assertThat(Duration.ofNanos(System.nanoTime() - t0))
                        .as("release on the healthy shard during the stall")
                        .isLessThan(Duration.ofMillis(1000));
                for (LockLease lease : onStalled) {
                    assertThat(lease.isValid()).as("lease on the stalled shard").isFalse();
                }
                proxy.resume();
            }
        }
    }

    /**
     * One stalled session costs only its own lease (issue 32: a hung session took every lease of the client): six
     * leases, each on a session of its own, and the connection of the first one stalls (the proxy stops relaying on
     * it alone). For longer than the session timeout plus a check's timeout, the other five stay valid, fire no loss
     * and are not grantable to another client; once the stall ends they release normally.
     */
    @ParameterizedTest
    @EnumSource(
            value = MySqlStrategy.class,
            names = {"ROW", "NAMED"})
    void aStalledSessionDoesNotDelayTheChecksOfTheOthers(MySqlStrategy strategy) throws Exception {
        try (StallingProxy proxy = proxyToStalledDb()) {
            String url = throughProxy(
                    proxy, strategy, "checkIntervalMs=200&sessionTimeoutMs=2000&timeoutMs=2000&poolSize=8", "onestall");
            try (LockClient client = MySqlTckSupport.open(url);
                    LockClient other = MySqlTckSupport.open(url)) {
                MySqlLockBackend backend = MySqlTckSupport.backendOf(client);
                LockLease first = client.lock("onestall:0").acquireDetached(Duration.ofSeconds(5));
                int stalledPort = localPort(backend.heldConnections().get(0));
                List<LockLease> others = new ArrayList<>();
                java.util.Map<String, String> lost = new java.util.concurrent.ConcurrentHashMap<>();
                for (int i = 1; i < 6; i++) {
                    String key = "onestall:" + i;
                    LockLease lease = client.lock(key).acquireDetached(Duration.ofSeconds(5));
                    lease.onLost(e -> lost.put(key, String.valueOf(e.getMessage())));
                    others.add(lease);
                }
                proxy.stallConnection(stalledPort);
                long start = System.nanoTime();
                try {
                    // the session timeout plus a stalled check's timeout (what checks made one after another
                    // would cost the others), and some
                    org.awaitility.Awaitility.await()
                            .during(Duration.ofMillis(4_500))
                            .atMost(Duration.ofMillis(6_500))
                            .pollInterval(Duration.ofMillis(20))
                            .untilAsserted(() -> {
                                for (LockLease lease : others) {
                                    assertThat(lease.isValid())
                                            .as("a lease whose session answers, "
                                                    + Duration.ofNanos(System.nanoTime() - start)
                                                            .toMillis()
                                                    + " ms after another lease's session stalled")
                                            .isTrue();
                                }
                                assertThat(lost).as("leases reported lost").isEmpty();
                            });
                    assertThat(first.isValid())
                            .as("the stalled lease, past its session timeout")
                            .isFalse();
                    for (int i = 1; i < 6; i++) {
                        assertThat(other.lock("onestall:" + i).tryAcquire())
                                .as("another client's try on a key whose holder's session answers")
                                .isEmpty();
                    }
                } finally {
                    proxy.resume();
                }
                for (LockLease lease : others) {
                    lease.release();
                }
                try {
                    first.release();
                } catch (org.locksmith.lock.LockException expected) {
                    // lost during the stall
                }
            }
        }
    }

    /** A proxy in front of the server of {@code stalledDb}. */
    private static StallingProxy proxyToStalledDb() throws java.io.IOException {
        return new StallingProxy(LockUrl.parse(stalledDb).hosts().get(0).port(3306));
    }

    /** A lock URL of {@code stalledDb} through {@code proxy}, with {@code params} and a table of its own. */
    private static String throughProxy(StallingProxy proxy, MySqlStrategy strategy, String params, String table) {
        LockUrl server = LockUrl.parse(stalledDb);
        return "mysql://" + server.user().orElse("root") + "@127.0.0.1:" + proxy.port() + "/" + server.path()
                + "?strategy=" + strategy.urlValue() + "&" + params + "&table=" + MySqlTestServer.uniqueTable(table);
    }

    /** The local port of a Connector/J connection's socket: the client port the proxy sees for it. */
    private static int localPort(java.sql.Connection c) throws Exception {
        return c.unwrap(com.mysql.cj.jdbc.ConnectionImpl.class)
                .getSession()
                .getProtocol()
                .getSocketConnection()
                .getMysqlSocket()
                .getLocalPort();
    }

    /**
     * Six leases on a server stalled past their session timeout: every one is found lost by its checks (a timeout,
     * or the session the server ended), and each gives its connection back then, so after the stall as many new
     * locks as the pool holds are granted while the owners of the lost leases have not released them.
     */
    @ParameterizedTest
    @EnumSource(
            value = MySqlStrategy.class,
            names = {"ROW", "NAMED"})
    void leasesLostDuringAStallGiveBackTheirConnections(MySqlStrategy strategy) throws Exception {
        try (StallingProxy proxy = proxyToStalledDb()) {
            String url = throughProxy(
                    proxy, strategy, "checkIntervalMs=200&sessionTimeoutMs=2000&timeoutMs=1000&poolSize=6", "runout");
            try (LockClient client = MySqlTckSupport.open(url)) {
                List<LockLease> lost = new ArrayList<>();
                for (int i = 0; i < 6; i++) {
                    lost.add(client.lock("runout:" + i).acquire(Duration.ofSeconds(5)));
                }
                proxy.stall();
                Thread.sleep(3_000); // past the session timeout
                proxy.resume();
                for (LockLease lease : lost) {
                    assertThat(lease.isValid()).isFalse();
                }
                List<LockLease> fresh = new ArrayList<>();
                try {
                    for (int i = 0; i < 6; i++) {
                        fresh.add(client.lock("runout:new:" + i).acquire(Duration.ofSeconds(5)));
                    }
                } finally {
                    fresh.forEach(LockLease::release);
                }
            }
        }
    }
}
