package org.locksmith.lock.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;

/** Construction from a DataSource the application owns, and URL validation before any I/O. */
class MySqlLocksApiTest {
    private static final String BASE_URL = MySqlTestServer.baseUrl();
    private static final String TABLE = MySqlTestServer.uniqueTable("api");

    @AfterAll
    static void dropTable() {
        MySqlTestServer.dropTables(BASE_URL, TABLE);
    }

    private static HikariDataSource pool(int size) {
        return MySqlTestServer.applicationPool(size);
    }

    @Test
    void usingAnApplicationsDataSourceLeavesItOpen() throws Exception {
        try (HikariDataSource ds = pool(4)) {
            try (LockClient a = MySqlLocks.builder().dataSource(ds).table(TABLE).build();
                    LockClient b = MySqlLocks.builder()
                            .dataSource(ds)
                            .table(TABLE)
                            .strategy(MySqlStrategy.ROW)
                            .build()) {
                assertThat(a.features()).contains(LockFeature.SESSION_BOUND, LockFeature.BLOCKING_WAKEUP);
                // generous: the first use opens pool connections and creates rows, slow on a loaded machine
                try (LockLease lease = a.lock("api:1").acquire(Duration.ofSeconds(10))) {
                    assertThat(b.lock("api:1").tryAcquire()).isEmpty();
                    assertThat(lease.fencingToken()).isPositive();
                }
                b.lock("api:1").tryAcquire().orElseThrow().release();
            }
            assertThat(ds.isClosed()).isFalse();
            try (LockClient leased = MySqlLocks.builder()
                    .dataSource(ds)
                    .table(TABLE + "_l")
                    .strategy(MySqlStrategy.LEASE)
                    .leaseTime(Duration.ofSeconds(5))
                    .build()) {
                assertThat(leased.features()).contains(LockFeature.LEASE_EXPIRY, LockFeature.AUTO_RENEWAL);
                leased.lock("api:2").acquire(Duration.ofSeconds(2)).release();
            } finally {
                MySqlTestServer.dropTables(BASE_URL, TABLE + "_l");
            }
            try (LockClient defaults = MySqlLocks.using(ds)) {
                assertThat(defaults.backend()).isEqualTo("mysql-row");
            }
        }
    }

    /** Valid table names that are reserved words work, because generated SQL backquotes them. */
    @Test
    void tableNamesThatAreReservedWordsWork() throws Exception {
        String db = MySqlTestServer.privateDatabaseUrl("reserved");
        try {
            String[][] cases = {{"row", "order"}, {"lease", "lock"}, {"named", "key"}};
            for (String[] c : cases) {
                try (LockClient client = MySqlTckSupport.open(db + "?strategy=" + c[0] + "&table=" + c[1])) {
                    try (LockLease lease = client.lock("api:reserved").acquire(Duration.ofSeconds(5))) {
                        assertThat(lease.fencingToken())
                                .as("strategy %s, table %s", c[0], c[1])
                                .isPositive();
                    }
                }
            }
        } finally {
            MySqlTestServer.dropDatabase(db);
        }
    }

    @Test
    void badUrlsAreRejectedBeforeAnyIo() {
        assertThatThrownBy(() -> Locks.open("mysql://127.0.0.1:1/test?strategy=queue"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("row, lease or named");
        assertThatThrownBy(() -> Locks.open("mysql://127.0.0.1:1/test?table=x;drop"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("table name");
        assertThatThrownBy(() -> Locks.open("mysql://127.0.0.1:1/test?poolSize=0"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("poolSize");
        assertThatThrownBy(() -> Locks.open("mysql://127.0.0.1:1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no database");
        assertThatThrownBy(() -> Locks.open("mysql://h1,h2,h3/a,b"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("3 hosts and 2 databases");
        assertThatThrownBy(() -> Locks.open("mysql://127.0.0.1:1/test?bogus=1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bogus");
        assertThatThrownBy(() -> Locks.open("mysql://127.0.0.1:1/test?driver=oracle"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("driver=oracle")
                .hasMessageContaining("mariadb");
    }
}
