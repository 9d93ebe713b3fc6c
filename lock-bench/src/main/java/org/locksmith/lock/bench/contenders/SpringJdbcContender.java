package org.locksmith.lock.bench.contenders;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.locksmith.lock.bench.Scenario;
import org.locksmith.lock.bench.StoreKind;
import org.locksmith.lock.bench.Stores;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * Spring Integration's {@code JdbcLockRegistry} over {@code DefaultLockRepository} with its MySQL schema, on a
 * HikariCP pool of 16 like ours, with its defaults: a 10 s TTL and a retry every 100 ms while the lock is taken.
 */
public final class SpringJdbcContender extends Peer {

    public SpringJdbcContender() {
        super("spring-jdbc", StoreKind.MYSQL);
    }

    @Override
    public String description() {
        return "Spring Integration " + JdbcLockRegistry.class.getPackage().getImplementationVersion()
                + " JdbcLockRegistry (DefaultLockRepository, 100 ms retry, pool 16)";
    }

    @Override
    public String notApplicable(Scenario scenario) {
        if (scenario == Scenario.S6) {
            return "renews nothing by itself: a lock held past its TTL (10 s) can be taken by another client unless"
                    + " the application calls renewLock(key)";
        }
        return null;
    }

    /** The table prefix of this run; the table is {@code <prefix>LOCK}. */
    public static String tablePrefix(Stores stores) {
        return "LSBENCH_" + stores.runId().toUpperCase(java.util.Locale.ROOT) + "_";
    }

    @Override
    public Client open(Stores stores, Duration lease) throws SQLException {
        String prefix = tablePrefix(stores);
        try (Connection c = stores.mysqlConnection();
                Statement s = c.createStatement()) {
            // Spring Integration's schema-mysql.sql, under this run's prefix.
            s.execute("CREATE TABLE IF NOT EXISTS " + prefix + "LOCK (LOCK_KEY CHAR(36) NOT NULL,"
                    + " REGION VARCHAR(100) NOT NULL, CLIENT_ID CHAR(36), CREATED_DATE DATETIME(6) NOT NULL,"
                    + " EXPIRED_AFTER DATETIME(6) NOT NULL, constraint " + prefix
                    + "LOCK_PK primary key (LOCK_KEY, REGION)) ENGINE=InnoDB");
        }
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(stores.jdbcUrl());
        config.setUsername(stores.mysqlUser());
        config.setPassword(stores.mysqlPassword());
        config.setMaximumPoolSize(16);
        config.setPoolName("spring-jdbc-bench");
        HikariDataSource dataSource = new HikariDataSource(config);
        DefaultLockRepository repository =
                new DefaultLockRepository(dataSource, UUID.randomUUID().toString());
        repository.setPrefix(prefix);
        repository.setTransactionManager(new DataSourceTransactionManager(dataSource));
        repository.afterPropertiesSet();
        repository.afterSingletonsInstantiated();
        JdbcLockRegistry registry = new JdbcLockRegistry(repository);
        AtomicBoolean staleReported = new AtomicBoolean();
        return new Client() {
            @Override
            public Handle handle(String key) {
                return new JucLockHandle(
                        name(), key, () -> registry.obtain(key), SpringRegistries::evictedFromCache, staleReported);
            }

            @Override
            public void close() {
                repository.close();
                dataSource.close();
            }
        };
    }
}
