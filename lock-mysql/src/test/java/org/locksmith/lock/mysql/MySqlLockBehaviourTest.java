package org.locksmith.lock.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.LockTimeoutException;

/**
 * The MySQL-specific behaviour the TCK cannot know about, per strategy: keys that collations would merge, exact
 * sub-second deadlines, tryAcquire not waiting, pool exhaustion, killed sessions, server-side expiry.
 */
class MySqlLockBehaviourTest {
    private static final String BASE_URL = MySqlTestServer.baseUrl();
    private static final String TABLE = MySqlTestServer.uniqueTable("behave");

    @AfterAll
    static void dropTable() {
        MySqlTestServer.dropTables(BASE_URL, TABLE);
    }

    static String url(MySqlStrategy strategy, String extra) {
        return BASE_URL + "?strategy=" + strategy.urlValue() + "&table=" + TABLE + "_" + strategy.urlValue()
                + "&leaseMs=1000&checkIntervalMs=100&timeoutMs=2000" + extra;
    }

    static String key(String name) {
        return "behave:" + name + ":" + System.nanoTime();
    }

    @ParameterizedTest
    @EnumSource(MySqlStrategy.class)
    void tokensRiseAcrossClientsAndReleases(MySqlStrategy strategy) throws Exception {
        String key = key("tokens");
        try (LockClient a = MySqlTckSupport.open(url(strategy, ""));
                LockClient b = MySqlTckSupport.open(url(strategy, ""))) {
            long last = 0;
            for (int i = 0; i < 4; i++) {
                LockClient c = i % 2 == 0 ? a : b;
                try (LockLease lease = c.lock(key).acquire(Duration.ofSeconds(2))) {
                    assertThat(lease.fencingToken()).isGreaterThan(last);
                    last = lease.fencingToken();
                    assertThat(lease.isValid()).isTrue();
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(MySqlStrategy.class)
    void keysThatCollationsWouldMergeStayDistinct(MySqlStrategy strategy) throws Exception {
        String base = key("keys");
        List<String> keys = List.of(
                base + "a",
                base + "A",
                base + "a ",
                base + "a  ",
                base + "\u00e4",
                base + "a\u0308",
                base + "'\"\\",
                base + "%",
                base + "_",
                base + "\\%",
                base + "\uD83D\uDD12",
                (base + "x".repeat(1024)).substring(0, 1024),
                (base + "x".repeat(1024)).substring(0, 1023) + "y");
        try (LockClient a = MySqlTckSupport.open(url(strategy, "&poolSize=20"));
                LockClient b = MySqlTckSupport.open(url(strategy, ""))) {
            List<LockLease> leases = new ArrayList<>();
            Set<Long> tokens = new HashSet<>();
            for (String k : keys) {
                LockLease lease = a.lock(k).tryAcquire().orElseThrow(() -> new AssertionError("not granted: " + k));
                leases.add(lease);
                tokens.add(lease.fencingToken());
            }
            for (String k : keys) {
                assertThat(b.lock(k).tryAcquire()).as("key %s held by a", k).isEmpty();
            }
            leases.forEach(LockLease::release);
            for (String k : keys) {
                b.lock(k).tryAcquire().orElseThrow().release();
            }
        }
    }

    @ParameterizedTest
    @EnumSource(MySqlStrategy.class)
    void tryAcquireDoesNotWaitAndTimedAcquireHonoursSubSecondDeadlines(MySqlStrategy strategy) throws Exception {
        String key = key("deadline");
        try (LockClient a = MySqlTckSupport.open(url(strategy, ""));
                LockClient b = MySqlTckSupport.open(url(strategy, ""))) {
            try (LockLease held = a.lock(key).acquire(Duration.ofSeconds(2))) {
                long t0 = System.nanoTime();
                assertThat(b.lock(key).tryAcquire()).isEmpty();
                assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofMillis(500));

                t0 = System.nanoTime();
                assertThat(b.lock(key).tryAcquire(Duration.ofMillis(300))).isEmpty();
                Duration took = Duration.ofNanos(System.nanoTime() - t0);
                assertThat(took).isGreaterThanOrEqualTo(Duration.ofMillis(300)).isLessThan(Duration.ofMillis(900));
            }
            // nothing of the abandoned waits is left: b gets it at once
            b.lock(key).tryAcquire().orElseThrow().release();
        }
    }

    @ParameterizedTest
    @EnumSource(MySqlStrategy.class)
    void waiterIsGrantedAfterReleaseAndInterruptLeavesNothing(MySqlStrategy strategy) throws Exception {
        String key = key("handoff");
        try (LockClient a = MySqlTckSupport.open(url(strategy, ""));
                LockClient b = MySqlTckSupport.open(url(strategy, ""))) {
            LockLease held = a.lock(key).acquire(Duration.ofSeconds(2));
            CompletableFuture<Long> waiter = new CompletableFuture<>();
            Thread waiting = new Thread(
                    () -> {
                        try (LockLease l = b.lock(key).acquire(Duration.ofSeconds(10))) {
                            waiter.complete(l.fencingToken());
                        } catch (Throwable e) {
                            waiter.completeExceptionally(e);
                        }
                    },
                    "behave-waiter");
            waiting.setDaemon(true);
            waiting.start();
            awaitWaiting(strategy, b, key, waiting);
            assertThat(waiter).isNotDone();
            long t0 = System.nanoTime();
            held.release();
            assertThat(waiter.get(5, TimeUnit.SECONDS)).isGreaterThan(held.fencingToken());
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(2));

            LockLease again = a.lock(key).acquire(Duration.ofSeconds(2));
            AtomicReference<Throwable> failure = new AtomicReference<>();
            CountDownLatch started = new CountDownLatch(1);
            Thread t = new Thread(
                    () -> {
                        started.countDown();
                        try {
                            b.lock(key).acquire(Duration.ofSeconds(30)).release();
                        } catch (Throwable e) {
                            failure.set(e);
                        }
                    },
                    "behave-interrupted-waiter");
            t.setDaemon(true);
            t.start();
            started.await();
            awaitWaiting(strategy, b, key, t);
            long i0 = System.nanoTime();
            t.interrupt();
            t.join(5000);
            assertThat(t.isAlive()).isFalse();
            assertThat(Duration.ofNanos(System.nanoTime() - i0)).isLessThan(Duration.ofSeconds(1));
            assertThat(failure.get()).isInstanceOf(InterruptedException.class);
            again.release();
            b.lock(key).tryAcquire().orElseThrow().release();
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = MySqlStrategy.class,
            names = {"ROW", "NAMED"})
    void moreHoldsThanThePoolAllowsTimeOutAtTheDeadline(MySqlStrategy strategy) throws Exception {
        try (LockClient a = MySqlTckSupport.open(url(strategy, "&poolSize=2"))) {
            LockLease one = a.lock(key("pool1")).acquire(Duration.ofSeconds(2));
            LockLease two = a.lock(key("pool2")).acquire(Duration.ofSeconds(2));
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> a.lock(key("pool3")).acquire(Duration.ofMillis(300)))
                    .isInstanceOf(LockTimeoutException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - t0))
                    .isBetween(Duration.ofMillis(290), Duration.ofSeconds(2));
            // a try has no deadline to run into: empty would say "held", so it fails saying what to change
            assertThatThrownBy(() -> a.lock(key("pool3")).tryAcquire())
                    .isInstanceOf(org.locksmith.lock.LockBackendException.class)
                    .hasMessageContaining("poolSize");
            // renewals (pings on the held connections) and releases do not need a pool connection
            one.release();
            two.release();
            a.lock(key("pool3")).tryAcquire().orElseThrow().release();
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = MySqlStrategy.class,
            names = {"ROW", "NAMED"})
    void killedSessionTurnsTheLeaseInvalidAndFreesTheKey(MySqlStrategy strategy) throws Exception {
        String key = key("kill");
        try (LockClient a = MySqlTckSupport.open(url(strategy, ""));
                LockClient b = MySqlTckSupport.open(url(strategy, ""))) {
            LockLease lease = a.lock(key).acquire(Duration.ofSeconds(2));
            CompletableFuture<LockLostException> lost = new CompletableFuture<>();
            lease.onLost(lost::complete);
            long t0 = System.nanoTime();
            MySqlTckSupport.killHeldSessions(
                    a, MySqlTckSupport.shardUrls(BASE_URL).get(0));
            try (LockLease taken = b.lock(key).acquire(Duration.ofSeconds(2))) {
                assertThat(taken.fencingToken()).isGreaterThan(lease.fencingToken());
            }
            assertThat(lost.get(2, TimeUnit.SECONDS)).isNotNull();
            assertThat(lease.isValid()).isFalse();
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(2));
            assertThatThrownBy(lease::release).isInstanceOf(LockLostException.class);
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = MySqlStrategy.class,
            names = {"LEASE"})
    void leaseRenewsPastItsLifetimeAndDetectsDeletion(MySqlStrategy strategy) throws Exception {
        String key = key("lease");
        try (LockClient a = MySqlTckSupport.open(url(strategy, ""));
                LockClient b = MySqlTckSupport.open(url(strategy, ""))) {
            LockLease lease = a.lock(key).acquire(Duration.ofSeconds(2));
            CompletableFuture<LockLostException> lost = new CompletableFuture<>();
            lease.onLost(lost::complete);
            Thread.sleep(2500); // 2.5 lease times: only renewal keeps it
            assertThat(lease.isValid()).isTrue();
            assertThat(b.lock(key).tryAcquire()).isEmpty();
            MySqlTestServer.execute(
                    BASE_URL.split(",")[0],
                    "DELETE FROM " + TABLE + "_lease WHERE lock_key = '" + key.replace("'", "''") + "'");
            assertThat(lost.get(3, TimeUnit.SECONDS)).isNotNull();
            assertThat(lease.isValid()).isFalse();
            Optional<LockLease> taken = b.lock(key).tryAcquire();
            assertThat(taken).isPresent();
            assertThat(taken.get().fencingToken()).isGreaterThan(lease.fencingToken());
            taken.get().release();
        }
    }

    @ParameterizedTest
    @EnumSource(MySqlStrategy.class)
    void closingAClientReleasesItsLocksAndFailsItsWaiters(MySqlStrategy strategy) throws Exception {
        String key = key("close");
        LockClient a = MySqlTckSupport.open(url(strategy, ""));
        try (LockClient b = MySqlTckSupport.open(url(strategy, ""))) {
            a.lock(key).acquire(Duration.ofSeconds(2));
            LockLease heldByB = b.lock(key + "b").acquire(Duration.ofSeconds(2));
            CompletableFuture<Object> waiter = new CompletableFuture<>();
            Thread waiting = new Thread(
                    () -> {
                        try {
                            waiter.complete(a.lock(key + "b").acquire(Duration.ofSeconds(30)));
                        } catch (RuntimeException | InterruptedException e) {
                            waiter.complete(e);
                        }
                    },
                    "behave-close-waiter");
            waiting.setDaemon(true);
            waiting.start();
            awaitWaiting(strategy, a, key + "b", waiting);
            a.close();
            assertThat(waiter.get(3, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class);
            await().atMost(Duration.ofSeconds(2))
                    .until(() -> b.lock(key)
                            .tryAcquire()
                            .map(l -> {
                                l.release();
                                return true;
                            })
                            .orElse(false));
            heldByB.release();
        }
    }

    @org.junit.jupiter.api.Test
    void unreachableServerFailsWithinTheTimeout() throws Exception {
        int closedPort;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> MySqlTckSupport.open(
                        "mysql://root@127.0.0.1:" + closedPort + "/test?timeoutMs=1000&table=" + TABLE))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("127.0.0.1:" + closedPort);
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(3));
    }

    /**
     * Waits until {@code waiter} waits for {@code key}, by the server's evidence where there is some: an InnoDB lock
     * wait on this class's row table, a {@code GET_LOCK} of the key's name in the process list; a {@code lease}
     * waiter polls, so there it is the thread sleeping between attempts.
     */
    private static void awaitWaiting(MySqlStrategy strategy, LockClient client, String key, Thread waiter) {
        String table = TABLE + "_" + strategy.urlValue();
        await().atMost(Duration.ofSeconds(5)).until(() -> switch (strategy) {
            case ROW ->
                count(
                                "SELECT COUNT(*) FROM information_schema.INNODB_TRX"
                                        + " WHERE trx_state = 'LOCK WAIT' AND trx_query LIKE ?",
                                "%" + table + "%")
                        > 0;
            case NAMED ->
                count(
                                "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE ?",
                                "%GET_LOCK%" + MySqlTckSupport.backendOf(client).lockName(key) + "%")
                        > 0;
            case LEASE -> waiter.getState() == Thread.State.TIMED_WAITING;
        });
    }

    private static long count(String sql, String pattern) throws java.sql.SQLException {
        try (java.sql.Connection c = MySqlTestServer.connect(BASE_URL);
                java.sql.PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, pattern);
            try (java.sql.ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
