package org.locksmith.lock.mysql;

import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

/**
 * What the server says about the {@code row} strategy's waits on one lock table, for the tests of cancelled waits.
 *
 * <p>{@code information_schema.PROCESSLIST} is read live: a session still running the table's locking read is a wait
 * the server has not ended. {@code information_schema.INNODB_TRX} is not: InnoDB answers it from a snapshot that it
 * refreshes only when the snapshot has not been read for 0.1 s, so a poller that reads it more often than that
 * (Awaitility's default interval is 100 ms) keeps reading one old snapshot, where ended waits seem to linger and new
 * ones never show. Every read of it here is at least {@link #SNAPSHOT_GAP} after the previous one.
 */
final class ServerWaits {
    /** Longer than InnoDB's 0.1 s, so that a read of INNODB_TRX (by nobody else meanwhile) is fresh. */
    static final Duration SNAPSHOT_GAP = Duration.ofMillis(200);

    private final String adminUrl;
    private final String lockRead;

    /**
     * @param adminUrl a lock URL of the server (its user reads every session's process list entry)
     * @param table the lock table, unquoted
     */
    ServerWaits(String adminUrl, String table) {
        this.adminUrl = adminUrl;
        this.lockRead = "SELECT 1 FROM `" + table + "` WHERE key_hash = %FOR UPDATE%";
    }

    /** Sessions running the table's locking read now (live). */
    long runningLockReads() throws SQLException {
        return count("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE ?");
    }

    /** Transactions of the table's locking read in LOCK WAIT (InnoDB's snapshot). */
    long lockWaits() throws SQLException {
        return count("SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'"
                + " AND trx_query LIKE ?");
    }

    /** Transactions whose last statement was the table's locking read, in any state (InnoDB's snapshot). */
    long lockReadTransactions() throws SQLException {
        return count("SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_query LIKE ?");
    }

    /** Waits, within {@code atMost}, until {@code waiters} transactions wait in InnoDB's queue of the table. */
    void awaitLockWaits(int waiters, Duration atMost) {
        await().atMost(atMost)
                .pollDelay(SNAPSHOT_GAP)
                .pollInterval(SNAPSHOT_GAP)
                .until(() -> lockWaits() == waiters && runningLockReads() == waiters);
    }

    /**
     * Milliseconds from {@code sinceNanos} until no session runs the table's locking read any more, waiting at most
     * {@code atMost} (then Awaitility fails naming the condition).
     */
    long awaitNoRunningLockRead(long sinceNanos, Duration atMost) {
        await().atMost(atMost)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(10))
                .until(() -> runningLockReads() == 0);
        return (System.nanoTime() - sinceNanos) / 1_000_000;
    }

    /** Waits, within {@code atMost}, until InnoDB lists no transaction of the table's locking read. */
    void awaitNoLockReadTransaction(Duration atMost) {
        await().atMost(atMost)
                .pollDelay(SNAPSHOT_GAP)
                .pollInterval(SNAPSHOT_GAP)
                .until(() -> lockReadTransactions() == 0);
    }

    private long count(String sql) throws SQLException {
        try (Connection c = MySqlTestServer.connect(adminUrl);
                PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, lockRead);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
