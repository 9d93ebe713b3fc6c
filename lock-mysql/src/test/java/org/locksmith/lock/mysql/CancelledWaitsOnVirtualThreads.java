package org.locksmith.lock.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;

/**
 * Run by {@link MySqlCancelledWaitTest} on Java 21+ in a JVM of its own (not by Surefire: its name does not end in
 * Test): {@code row} waits on virtual threads that end by interrupt, or by the client's close (which interrupts the
 * waits its cancellations have not ended after a grace period), end on the server too. The test server's URL comes
 * from {@link #BASE_URL_PROPERTY}, so the child uses the parent's server (embedded or not).
 */
class CancelledWaitsOnVirtualThreads {
    static final String BASE_URL_PROPERTY = "locksmith.test.cancelwait.baseUrl";
    private static final String BASE_URL = System.getProperty(BASE_URL_PROPERTY, MySqlTestServer.baseUrl());
    private static final String TABLE = MySqlTestServer.uniqueTable("vcancelwait");

    @AfterAll
    static void dropTable() {
        MySqlTestServer.dropTables(BASE_URL, TABLE);
    }

    /** {@code Executors.newVirtualThreadPerTaskExecutor()}, looked up: this code compiles for Java 17. */
    private static ExecutorService virtualThreads() throws ReflectiveOperationException {
        return (ExecutorService)
                Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
    }

    @Test
    void interruptedWaitsEndOnTheServerAtOnce() throws Exception {
        String key = "vcancelwait:interrupt:" + System.nanoTime();
        ServerWaits server = new ServerWaits(BASE_URL, TABLE);
        ExecutorService threads = virtualThreads();
        try (LockClient holder = MySqlTckSupport.open(MySqlCancelledWaitTest.url(BASE_URL, TABLE, 2));
                LockClient waiter = MySqlTckSupport.open(MySqlCancelledWaitTest.url(BASE_URL, TABLE, 16));
                LockLease held = holder.lock(key).acquire(Duration.ofSeconds(5))) {
            List<Future<?>> waits = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                waits.add(threads.submit(() -> {
                    waiter.lock(key).asLock().tryLock(MySqlCancelledWaitTest.WAIT.toMillis(), TimeUnit.MILLISECONDS);
                    return null;
                }));
            }
            server.awaitLockWaits(12, Duration.ofSeconds(20));
            long interrupted = System.nanoTime();
            waits.forEach(w -> w.cancel(true));
            long ms = server.awaitNoRunningLockRead(interrupted, Duration.ofMillis(500));
            server.awaitNoLockReadTransaction(Duration.ofSeconds(1));
            System.out.println("12 interrupted row waits on virtual threads ended on the server after " + ms + " ms");
            assertThat(held.isValid()).isTrue();
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void closeEndsPendingAsyncWaitsOnTheServerAtOnce() throws Exception {
        String key = "vcancelwait:close:" + System.nanoTime();
        ServerWaits server = new ServerWaits(BASE_URL, TABLE);
        try (LockClient holder = MySqlTckSupport.open(MySqlCancelledWaitTest.url(BASE_URL, TABLE, 2));
                LockLease held = holder.lock(key).acquire(Duration.ofSeconds(5))) {
            LockClient waiter = MySqlTckSupport.open(MySqlCancelledWaitTest.url(BASE_URL, TABLE, 20));
            List<CompletableFuture<LockLease>> waits = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                waits.add(waiter.lock(key).acquireAsync(MySqlCancelledWaitTest.WAIT)); // on virtual threads
            }
            server.awaitLockWaits(16, Duration.ofSeconds(20));
            long closing = System.nanoTime();
            waiter.close();
            long ms = server.awaitNoRunningLockRead(closing, Duration.ofMillis(500));
            server.awaitNoLockReadTransaction(Duration.ofSeconds(1));
            System.out.println(
                    "close() ended 16 pending row waits on virtual threads on the server after " + ms + " ms");
            assertThat(waits).allMatch(CompletableFuture::isCompletedExceptionally);
            assertThat(held.isValid()).isTrue();
        }
    }
}
