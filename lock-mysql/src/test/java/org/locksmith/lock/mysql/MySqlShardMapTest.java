package org.locksmith.lock.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.mysql.internal.MySqlLockBackend;

/**
 * Shard identity comes from the databases, not from how a client spells them: clients with equivalent maps route
 * every key alike, and a client whose shard set differs from the one in use refuses to open instead of granting
 * some keys a second time on another database.
 */
class MySqlShardMapTest {
    private static String first;
    private static String second;
    private static String third;

    @BeforeAll
    static void databases() {
        first = MySqlTestServer.privateDatabaseUrl("map1");
        second = MySqlTestServer.privateDatabaseUrl("map2");
        third = MySqlTestServer.privateDatabaseUrl("map3");
    }

    @AfterAll
    static void dropDatabases() {
        for (String db : new String[] {first, second, third}) {
            if (db != null) {
                MySqlTestServer.dropDatabase(db);
            }
        }
    }

    /** {@code mysql://host/db1,db2,...} for the given private databases of the test server. */
    private static String url(String table, String... dbs) {
        String base = dbs[0].substring(0, dbs[0].lastIndexOf('/') + 1);
        List<String> names = new ArrayList<>();
        for (String db : dbs) {
            names.add(db.substring(db.lastIndexOf('/') + 1));
        }
        return base + String.join(",", names) + "?strategy=lease&leaseMs=20000&table=" + table;
    }

    private static HikariDataSource pool(String lockUrl) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(MySqlTestServer.jdbcUrl(lockUrl));
        config.setUsername(org.locksmith.lock.spi.LockUrl.parse(lockUrl).user().orElse("root"));
        config.setPassword(
                org.locksmith.lock.spi.LockUrl.parse(lockUrl).password().orElse(""));
        config.setMaximumPoolSize(3);
        config.setMinimumIdle(0);
        return new HikariDataSource(config);
    }

    @Test
    void clientsThatSpellTheSameShardsDifferentlyRouteEveryKeyAlike() throws Exception {
        String table = MySqlTestServer.uniqueTable("map_same");
        try (LockClient byUrl = Locks.open(url(table, first, second));
                HikariDataSource poolOfSecond = pool(second);
                HikariDataSource poolOfFirst = pool(first);
                // other names, other order, application pools instead of URL-opened ones
                LockClient byBuilder = MySqlLocks.builder()
                        .dataSource("eu", poolOfSecond)
                        .dataSource("us", poolOfFirst)
                        .strategy(MySqlStrategy.LEASE)
                        .leaseTime(Duration.ofSeconds(20))
                        .table(table)
                        .build()) {
            int both = 0;
            for (int i = 0; i < 40; i++) {
                String key = "map:" + i;
                try (LockLease held = byUrl.lock(key).acquire(Duration.ofSeconds(5))) {
                    var second = byBuilder.lock(key).tryAcquire();
                    if (second.isPresent()) {
                        both++;
                        second.get().release();
                    }
                }
            }
            assertThat(both)
                    .as("keys granted to both clients at once (each key must live on one database)")
                    .isZero();
        }
    }

    @Test
    void aClientWithOneShardMoreRefusesToOpenWhileTheOldMapIsInUseAndReplacesItWhenAsked() throws Exception {
        String table = MySqlTestServer.uniqueTable("map_more");
        String oldMap = url(table, first, second);
        String newMap = url(table, first, second, third);
        try (LockClient running = Locks.open(oldMap)) {
            running.lock("k").acquire(Duration.ofSeconds(5)).release();
            assertThatThrownBy(() -> Locks.open(newMap).close())
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("differ from the shard map")
                    .hasMessageContaining("/" + third.substring(third.lastIndexOf('/') + 1) + ")] that this client has")
                    .hasMessageContaining("replaceShardMap");
            // nor a client with one shard less
            assertThatThrownBy(() -> Locks.open(url(table, second)).close())
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("differ from the shard map")
                    .hasMessageContaining("(not a shard of this client)] that this client lacks");
        }
        // the operator's step: every client of the old map stopped, one client replaces it
        try (LockClient replacing = Locks.open(newMap + "&replaceShardMap=true");
                LockClient sameNewMap = Locks.open(newMap)) {
            try (LockLease held = replacing.lock("k").acquire(Duration.ofSeconds(5))) {
                assertThat(sameNewMap.lock("k").tryAcquire()).isEmpty();
            }
        }
        assertThatThrownBy(() -> Locks.open(oldMap).close())
                .as("a client still configured with the old map is refused after the change")
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("differ from the shard map");
    }

    @Test
    void oneDatabaseListedTwiceUnderDifferentNamesIsRefused() {
        String table = MySqlTestServer.uniqueTable("map_twice");
        try (HikariDataSource a = pool(first);
                HikariDataSource b = pool(first)) {
            assertThatThrownBy(() -> MySqlLocks.builder()
                            .dataSource("primary", a)
                            .dataSource("alias", b)
                            .table(table)
                            .build()
                            .close())
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("are the same database");
        }
    }

    @Test
    void theShardOfAKeyDoesNotDependOnTheNamesOfTheDataSources() {
        String table = MySqlTestServer.uniqueTable("map_names");
        try (HikariDataSource a = pool(first);
                HikariDataSource b = pool(second)) {
            MySqlLockBackend one = (MySqlLockBackend) MySqlLocks.builder()
                    .dataSource("a", a)
                    .dataSource("b", b)
                    .table(table)
                    .buildBackend();
            MySqlLockBackend other = (MySqlLockBackend) MySqlLocks.builder()
                    .dataSource(b)
                    .dataSource(a)
                    .table(table)
                    .buildBackend();
            try {
                int onA = 0;
                for (int i = 0; i < 200; i++) {
                    String key = "route:" + i;
                    boolean oneOnA = one.shardFor(key).name().equals("a");
                    boolean otherOnA = other.shardFor(key).name().equals("shard1");
                    assertThat(otherOnA).as("shard of %s", key).isEqualTo(oneOnA);
                    onA += oneOnA ? 1 : 0;
                }
                assertThat(onA).as("keys spread over both shards").isBetween(60, 140);
            } finally {
                one.close();
                other.close();
            }
        }
    }
}
