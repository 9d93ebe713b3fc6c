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
     * Six leases on a server stalled past their session timeout: every one is found lost by its checks (a timeout,
     * or the session the server ended), and each gives its connection back then, so after the stall as many new
     * locks as the pool holds are granted while the owners of the lost leases have not released them.
     */
    @ParameterizedTest
    @EnumSource(
            value = MySqlStrategy.class,
            names = {"ROW", "NAMED"})
    void leasesLostDuringAStallGiveBackTheirConnections(MySqlStrategy strategy) throws Exception {
        LockUrl server = LockUrl.parse(stalledDb);
        LockUrl.HostAndPort host = server.hosts().get(0);
        try (StallingProxy proxy = new StallingProxy(host.port(3306))) {
            String url = "mysql://" + server.user().orElse("root") + "@127.0.0.1:" + proxy.port() + "/"
                    + server.path() + "?strategy=" + strategy.urlValue()
                    + "&checkIntervalMs=200&sessionTimeoutMs=2000&timeoutMs=1000&poolSize=6&table="
                    + MySqlTestServer.uniqueTable("runout");
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
