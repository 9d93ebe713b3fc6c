package org.locksmith.lock.bench.contenders;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.locksmith.lock.bench.Contender;
import org.locksmith.lock.bench.Scenario;
import org.locksmith.lock.bench.StoreKind;
import org.locksmith.lock.bench.Stores;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * Spring Integration's {@code JdbcLockRegistry} over {@code DefaultLockRepository}, its lock table created with the
 * DDL Spring Integration ships for the database ({@code schema-mysql.sql}, {@code schema-postgresql.sql}), on a
 * HikariCP pool of 16 like ours, with its defaults: a 10 s TTL and a retry every 100 ms while the lock is taken.
 *
 * <p>On PostgreSQL the insert query gets {@code ON CONFLICT DO NOTHING}, as {@code
 * DefaultLockRepository.setInsertQuery} documents for PostgreSQL: without it, the insert that finds the lock taken
 * fails with a unique violation inside the repository's transaction, which PostgreSQL then aborts.
 */
public final class SpringJdbcContender extends Peer {

    private SpringJdbcContender(String name, StoreKind store) {
        super(name, store);
    }

    public static Contender mysql() {
        return new SpringJdbcContender("spring-jdbc", StoreKind.MYSQL);
    }

    public static Contender postgres() {
        return new SpringJdbcContender("spring-jdbc-postgres", StoreKind.POSTGRES);
    }

    @Override
    public String description() {
        return "Spring Integration " + JdbcLockRegistry.class.getPackage().getImplementationVersion()
                + " JdbcLockRegistry (DefaultLockRepository"
                + (store() == StoreKind.POSTGRES ? ", insert ON CONFLICT DO NOTHING" : "")
                + ", 100 ms retry, pool 16)";
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
        return "LSBENCH_" + stores.runId().toUpperCase(Locale.ROOT) + "_";
    }

    @Override
    public Client open(Stores stores, Duration lease) throws SQLException, IOException {
        String prefix = tablePrefix(stores);
        boolean postgres = store() == StoreKind.POSTGRES;
        try (Connection c = postgres ? stores.postgresConnection() : stores.mysqlConnection();
                Statement s = c.createStatement()) {
            s.execute(lockTableDdl(postgres ? "postgresql" : "mysql", prefix));
        }
        HikariConfig config = new HikariConfig();
        if (postgres) {
            config.setJdbcUrl(stores.postgresJdbcUrl());
            config.setUsername(stores.postgresUser());
            config.setPassword(stores.postgresPassword());
            // PostgreSQL allows 100 connections by default: S3's eight clients cannot each open 16 up front.
            config.setMinimumIdle(0);
        } else {
            config.setJdbcUrl(stores.jdbcUrl());
            config.setUsername(stores.mysqlUser());
            config.setPassword(stores.mysqlPassword());
        }
        config.setMaximumPoolSize(16);
        config.setPoolName(name() + "-bench");
        HikariDataSource dataSource = new HikariDataSource(config);
        DefaultLockRepository repository =
                new DefaultLockRepository(dataSource, UUID.randomUUID().toString());
        repository.setPrefix(prefix);
        if (postgres) {
            repository.setInsertQuery(repository.getInsertQuery() + " ON CONFLICT DO NOTHING");
        }
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

    /**
     * The {@code INT_LOCK} table of Spring Integration's {@code schema-<database>.sql}, as shipped in its jar, under
     * {@code prefix} and created only if missing (every client of a scenario runs it).
     */
    static String lockTableDdl(String database, String prefix) throws IOException {
        String resource = "/org/springframework/integration/jdbc/schema-" + database + ".sql";
        String schema;
        try (InputStream in = DefaultLockRepository.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("Spring Integration's jar has no " + resource);
            }
            schema = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        int start = schema.indexOf("CREATE TABLE INT_LOCK ");
        if (start < 0) {
            throw new IllegalStateException(resource + " has no CREATE TABLE INT_LOCK");
        }
        String ddl = schema.substring(start, schema.indexOf(';', start));
        return ddl.replace("CREATE TABLE INT_", "CREATE TABLE IF NOT EXISTS " + prefix)
                .replace("INT_LOCK_PK", prefix + "LOCK_PK");
    }
}
