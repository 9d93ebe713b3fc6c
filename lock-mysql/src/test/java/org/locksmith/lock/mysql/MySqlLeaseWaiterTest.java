package org.locksmith.lock.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;

/**
 * A {@code lease} waiter polls with an {@code UPDATE} (it cannot be woken by the server); re-running the {@code
 * INSERT} that creates a missing row on every poll would double its writes for nothing once the row exists, so it
 * is tried at most about once a second. Counted by a {@code BEFORE INSERT} trigger, which fires for every row an
 * {@code INSERT IGNORE} attempts, duplicate or not.
 */
class MySqlLeaseWaiterTest {
    private static final String BASE_URL = MySqlTestServer.baseUrl();
    private static final String TABLE = MySqlTestServer.uniqueTable("waiter");

    @AfterAll
    static void dropTables() {
        MySqlTestServer.dropTables(BASE_URL, TABLE);
        MySqlTestServer.execute(BASE_URL, "DROP TABLE IF EXISTS " + TABLE + "_inserts");
    }

    @Test
    void aWaitingLeaseClientTriesTheRowInsertAtMostAboutOnceASecond() throws Exception {
        String url = BASE_URL + "?strategy=lease&table=" + TABLE + "&leaseMs=30000";
        String key = "waiter:" + System.nanoTime();
        try (LockClient holder = MySqlTckSupport.open(url);
                LockClient waiter = MySqlTckSupport.open(url);
                Connection admin = MySqlTestServer.connect(BASE_URL)) {
            try (LockLease held = holder.lock(key).acquire(Duration.ofSeconds(5))) {
                try (Statement s = admin.createStatement()) {
                    s.execute("CREATE TABLE " + TABLE + "_inserts (n INT NOT NULL)");
                    s.execute("INSERT INTO " + TABLE + "_inserts VALUES (0)");
                    s.execute("CREATE TRIGGER " + TABLE + "_count BEFORE INSERT ON " + TABLE + " FOR EACH ROW UPDATE "
                            + TABLE + "_inserts SET n = n + 1");
                }
                assertThat(waiter.lock(key).tryAcquire(Duration.ofMillis(2500))).isEmpty();
                assertThat(inserts(admin))
                        .as("row inserts tried by a lease waiter during 2.5 s (the row exists)")
                        .isBetween(1, 4);
            }
        }
    }

    private static int inserts(Connection admin) throws SQLException {
        try (Statement s = admin.createStatement();
                ResultSet rs = s.executeQuery("SELECT n FROM " + TABLE + "_inserts")) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
