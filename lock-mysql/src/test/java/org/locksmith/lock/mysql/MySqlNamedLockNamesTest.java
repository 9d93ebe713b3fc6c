package org.locksmith.lock.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.spi.LockUrl;

/**
 * {@code GET_LOCK} names are server-wide, across databases: two applications that use different databases of one
 * server, with the same table name and the same key, must not block each other.
 */
class MySqlNamedLockNamesTest {
    private static final String BASE_URL = MySqlTestServer.baseUrl();
    private static final String TABLE = MySqlTestServer.uniqueTable("names");
    private static final String OTHER_DB = LockUrl.parse(BASE_URL).path() + "_" + TABLE;

    @AfterAll
    static void dropDatabase() {
        MySqlTestServer.dropTables(BASE_URL, TABLE);
        MySqlTestServer.execute(BASE_URL, "DROP DATABASE IF EXISTS " + OTHER_DB);
    }

    @Test
    void theSameKeyAndTableInTwoDatabasesOfOneServerAreTwoLocks() throws Exception {
        MySqlTestServer.execute(BASE_URL, "CREATE DATABASE IF NOT EXISTS " + OTHER_DB);
        String otherUrl = BASE_URL.substring(0, BASE_URL.lastIndexOf('/') + 1) + OTHER_DB;
        String params = "?strategy=named&table=" + TABLE;
        String key = "names:" + System.nanoTime();
        try (LockClient first = MySqlTckSupport.open(BASE_URL + params);
                LockClient second = MySqlTckSupport.open(otherUrl + params);
                LockClient sameDb = MySqlTckSupport.open(BASE_URL + params)) {
            try (LockLease held = first.lock(key).acquire(Duration.ofSeconds(5))) {
                Optional<LockLease> other = second.lock(key).tryAcquire();
                assertThat(other)
                        .as("key '%s' in database %s while held in the first one", key, OTHER_DB)
                        .isPresent();
                other.get().release();
                assertThat(sameDb.lock(key).tryAcquire())
                        .as("the same database still excludes")
                        .isEmpty();
            }
        }
    }
}
