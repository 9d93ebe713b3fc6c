package org.locksmith.lock.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.mysql.internal.KeyCodec;

/**
 * {@code tryAcquire()} never waits, and a timed acquire keeps its deadline, when another session (an operator, or
 * a client in the middle of creating the same key's row) holds the key's row lock or an uncommitted insert of it:
 * the cases that the holder-only checks of the TCK do not reach.
 */
class MySqlTryAcquireTest {
    private static final String BASE_URL = MySqlTestServer.baseUrl();
    private static final String TABLE = MySqlTestServer.uniqueTable("try");

    @AfterAll
    static void dropTables() {
        for (MySqlStrategy s : new MySqlStrategy[] {MySqlStrategy.ROW, MySqlStrategy.LEASE}) {
            MySqlTestServer.dropTables(BASE_URL, table(s));
        }
    }

    static String table(MySqlStrategy strategy) {
        return TABLE + "_" + strategy.urlValue();
    }

    static String url(MySqlStrategy strategy) {
        return BASE_URL + "?strategy=" + strategy.urlValue() + "&table=" + table(strategy) + "&timeoutMs=5000";
    }

    /**
     * A try on another key while every lock connection holds a lock: the key may well be free, so an empty result
     * (which reads "held by another") would be a lie; it fails with what to change, after at most the timeout.
     */
    @org.junit.jupiter.api.Test
    void aTryWithEveryLockConnectionInUseFailsClearlyInsteadOfReadingAsHeld() throws Exception {
        String url = BASE_URL + "?strategy=row&table=" + table(MySqlStrategy.ROW) + "&timeoutMs=1000&poolSize=1";
        try (LockClient client = MySqlTckSupport.open(url)) {
            LockLease held = client.lock("try:pool:held").acquire(Duration.ofSeconds(5));
            java.util.concurrent.CompletableFuture<Optional<LockLease>> other =
                    java.util.concurrent.CompletableFuture.supplyAsync(
                            () -> client.lock("try:pool:free").tryAcquire());
            org.assertj.core.api.Assertions.assertThatThrownBy(
                            () -> other.get(10, java.util.concurrent.TimeUnit.SECONDS))
                    .hasCauseInstanceOf(org.locksmith.lock.LockBackendException.class)
                    .hasMessageContaining("poolSize");
            held.release();
            client.lock("try:pool:free").tryAcquire().orElseThrow().release();
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = MySqlStrategy.class,
            names = {"ROW", "LEASE"})
    void anUncommittedInsertOfTheKeyRowByAnotherSessionDoesNotMakeTryWait(MySqlStrategy strategy) throws Exception {
        String key = "try:insert:" + System.nanoTime();
        try (LockClient client = MySqlTckSupport.open(url(strategy));
                Connection other = MySqlTestServer.connect(BASE_URL)) {
            other.setAutoCommit(false);
            try (PreparedStatement ps =
                    other.prepareStatement("INSERT INTO " + table(strategy) + " (key_hash, lock_key) VALUES (?, ?)")) {
                ps.setBytes(1, KeyCodec.sha256(key));
                ps.setString(2, key);
                ps.executeUpdate();
            }
            assertNotWaiting(client, key);
            other.rollback();
            client.lock(key).tryAcquire().orElseThrow().release();
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = MySqlStrategy.class,
            names = {"ROW", "LEASE"})
    void aRowLockedByAnotherSessionDoesNotMakeTryWait(MySqlStrategy strategy) throws Exception {
        String key = "try:locked:" + System.nanoTime();
        try (LockClient client = MySqlTckSupport.open(url(strategy));
                Connection other = MySqlTestServer.connect(BASE_URL)) {
            client.lock(key).tryAcquire().orElseThrow().release(); // the row exists
            other.setAutoCommit(false);
            try (PreparedStatement ps =
                    other.prepareStatement("SELECT 1 FROM " + table(strategy) + " WHERE key_hash = ? FOR UPDATE")) {
                ps.setBytes(1, KeyCodec.sha256(key));
                ps.executeQuery().close();
            }
            assertNotWaiting(client, key);
            other.rollback();
            client.lock(key).tryAcquire().orElseThrow().release();
        }
    }

    private static void assertNotWaiting(LockClient client, String key) throws InterruptedException {
        long t0 = System.nanoTime();
        Optional<LockLease> attempt = client.lock(key).tryAcquire();
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        attempt.ifPresent(LockLease::release);
        assertThat(attempt).as("tryAcquire of a key another session has locked").isEmpty();
        assertThat(took).as("tryAcquire must not wait").isLessThan(Duration.ofMillis(500));

        t0 = System.nanoTime();
        Optional<LockLease> timed = client.lock(key).tryAcquire(Duration.ofMillis(300));
        took = Duration.ofNanos(System.nanoTime() - t0);
        timed.ifPresent(LockLease::release);
        assertThat(timed).isEmpty();
        assertThat(took).as("a 300 ms acquire keeps its deadline").isLessThan(Duration.ofMillis(1300));
    }
}
