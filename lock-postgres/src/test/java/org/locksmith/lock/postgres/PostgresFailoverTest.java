package org.locksmith.lock.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.testservers.PrivatePostgres;

/**
 * Fencing tokens across a failover to an asynchronous streaming replica that missed the last commits: the replica's
 * counter of the key is behind, and the token must still rise (the server clock floor). Two private servers, a
 * client URL naming both (it follows the primary).
 */
class PostgresFailoverTest {
    private PrivatePostgres primary;
    private PrivatePostgres replica;

    @AfterEach
    void stopServers() {
        if (replica != null) {
            replica.close();
        }
        if (primary != null) {
            primary.close();
        }
    }

    @Test
    void tokensRiseAfterFailoverToAReplicaThatMissedTheLastCommits() throws Exception {
        primary = PrivatePostgres.start(0);
        String url = "postgresql://postgres@127.0.0.1:" + primary.port() + ",127.0.0.1:%d/test"
                + "?table=failover&restartHoldOffMs=0&timeoutMs=2000";
        String key = "failover-key";
        long lastOnPrimary;
        // the schema, and a first token, before the replica is made: it starts with both
        try (LockClient c = Locks.open(url.formatted(primary.port()))) {
            c.lock(key).acquire(Duration.ofSeconds(5)).release();
        }
        replica = primary.streamingReplica();
        String both = url.formatted(replica.port());
        try (LockClient c = Locks.open(both)) {
            long replicated = grant(c, key);
            await("the replica has the key's counter at " + replicated)
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> counterOn(replica, key) == replicated);
            replica.stopReceiving();
            long token = 0;
            for (int i = 0; i < 3; i++) {
                token = grant(c, key);
            }
            lastOnPrimary = token;
            assertThat(counterOn(primary, key)).isEqualTo(lastOnPrimary);
        }
        assertThat(counterOn(replica, key))
                .as("the replica missed the last commits (its counter of the key is behind the primary's)")
                .isLessThan(lastOnPrimary);
        primary.crash();
        replica.promote();
        try (LockClient c = Locks.open(both)) {
            long afterFailover = grant(c, key);
            assertThat(afterFailover)
                    .as("the first token after the failover, against the last one the old primary issued")
                    .isGreaterThan(lastOnPrimary);
        }
    }

    private static long grant(LockClient c, String key) throws InterruptedException {
        try (LockLease lease = c.lock(key).acquire(Duration.ofSeconds(10))) {
            return lease.fencingToken();
        }
    }

    private static long counterOn(PrivatePostgres server, String key) throws Exception {
        try (Connection c = DriverManager.getConnection(server.jdbcUrl(), "postgres", "");
                PreparedStatement ps = c.prepareStatement("SELECT token FROM failover WHERE key_hash = ?")) {
            ps.setBytes(1, ServerSql.sha256(key));
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : 0;
            }
        }
    }
}
