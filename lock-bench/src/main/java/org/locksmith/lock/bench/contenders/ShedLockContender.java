package org.locksmith.lock.bench.contenders;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import org.locksmith.lock.bench.Environment;
import org.locksmith.lock.bench.Scenario;
import org.locksmith.lock.bench.StoreKind;
import org.locksmith.lock.bench.Stores;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * ShedLock's JDBC provider ({@code JdbcTemplateLockProvider}) on PostgreSQL with the database's clock ({@code
 * usingDbTime()}, as ShedLock recommends), its table created with the DDL ShedLock documents for PostgreSQL, on a
 * HikariCP pool of 16 like ours. Locks are taken with {@code lockAtMostFor} 30 s (the scenario's lease where it
 * gives one) and {@code lockAtLeastFor} 0, so a release frees the name at once.
 *
 * <p>ShedLock never waits: {@code LockProvider.lock} answers at once, empty while another holder's lock has not
 * expired. The handle therefore polls, every {@link #POLL} (100 ms, the interval Spring Integration's {@code
 * JdbcLockRegistry} retries at by default), until granted or {@link #GRANT_TIMEOUT}: hand-off (S4) and contention
 * (S3) figures include that poll. Not re-entrant: a second lock of a name its own client holds is refused like
 * anyone else's.
 */
public final class ShedLockContender extends Peer {
    /** How long the handle sleeps between two refused lock attempts. */
    public static final Duration POLL = Duration.ofMillis(100);

    private static final Duration LOCK_AT_MOST_FOR = Duration.ofSeconds(30);

    public ShedLockContender() {
        super("shedlock-jdbc", StoreKind.POSTGRES);
    }

    @Override
    public String description() {
        // ShedLock's jar carries no Implementation-Version, only its Maven metadata.
        return "ShedLock " + Environment.version("net.javacrumbs.shedlock", "shedlock-core")
                + " JdbcTemplateLockProvider (usingDbTime, never waits: polled every " + POLL.toMillis()
                + " ms, lockAtMostFor " + LOCK_AT_MOST_FOR.toSeconds() + " s, pool 16)";
    }

    @Override
    public String notApplicable(Scenario scenario) {
        return switch (scenario) {
            case S5 ->
                "not re-entrant: a client that locks a name it holds is refused until the lock is released or"
                        + " lockAtMostFor passes";
            case S6 ->
                "renews nothing by itself: a lock held past lockAtMostFor can be taken by another client unless"
                        + " the application extends it (SimpleLock.extend)";
            default -> null;
        };
    }

    @Override
    public Client open(Stores stores, Duration lease) throws SQLException {
        String table = "lsbench_" + stores.runId() + "_shedlock";
        try (Connection c = stores.postgresConnection();
                Statement s = c.createStatement()) {
            // ShedLock's README, "Configure LockProvider", JdbcTemplate, the table for PostgreSQL.
            s.execute("CREATE TABLE IF NOT EXISTS " + table + " (name VARCHAR(64) NOT NULL,"
                    + " lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL,"
                    + " PRIMARY KEY (name))");
        }
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(stores.postgresJdbcUrl());
        config.setUsername(stores.postgresUser());
        config.setPassword(stores.postgresPassword());
        config.setMaximumPoolSize(16);
        // PostgreSQL allows 100 connections by default: S3's eight clients cannot each open 16 up front.
        config.setMinimumIdle(0);
        config.setPoolName("shedlock-bench");
        HikariDataSource dataSource = new HikariDataSource(config);
        LockProvider provider = new JdbcTemplateLockProvider(JdbcTemplateLockProvider.Configuration.builder()
                .withJdbcTemplate(new JdbcTemplate(dataSource))
                .withTableName(table)
                .usingDbTime()
                .build());
        Duration atMost = lease == null ? LOCK_AT_MOST_FOR : lease;
        return new Client() {
            @Override
            public Handle handle(String key) {
                return new Handle() {
                    private SimpleLock held;

                    @Override
                    public void lock() throws InterruptedException {
                        long deadline = System.nanoTime() + GRANT_TIMEOUT.toNanos();
                        while (true) {
                            Optional<SimpleLock> granted = provider.lock(
                                    new LockConfiguration(ClockProvider.now(), key, atMost, Duration.ZERO));
                            if (granted.isPresent()) {
                                held = granted.get();
                                return;
                            }
                            if (System.nanoTime() - deadline > 0) {
                                throw new IllegalStateException(name() + " was not granted " + key + " within "
                                        + GRANT_TIMEOUT.toSeconds() + " s");
                            }
                            TimeUnit.NANOSECONDS.sleep(POLL.toNanos()); // ShedLock has nothing to wait on
                        }
                    }

                    @Override
                    public void unlock() {
                        held.unlock();
                        held = null;
                    }
                };
            }

            @Override
            public void close() {
                dataSource.close();
            }
        };
    }
}
