package org.locksmith.lock.springintegration;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ConcurrentModificationException;
import java.util.Locale;
import java.util.Properties;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.locksmith.lock.testservers.TestPostgres;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * The registry contract on Spring's own {@code JdbcLockRegistry} over {@code DefaultLockRepository} on the test
 * PostgreSQL ({@link TestPostgres}): two repositories, each with a data source and transaction manager of its own, as
 * two nodes (the short-expiry nodes: two more, in registries with an {@code expireAfter} of {@link #SHORT_EXPIRY}). The lock table is Spring Integration's own {@code INT_LOCK}, created from the schema script its jar ships,
 * under a table prefix of its own per run (so runs never collide), and dropped at the end.
 */
class SpringJdbcRegistryContractTest extends LockRegistryContract {
    /** Spring Integration JDBC's PostgreSQL schema script, in its jar. */
    private static final String SCHEMA = "/org/springframework/integration/jdbc/schema-postgresql.sql";

    private static final String PREFIX = "LOCKSMITH_SI_"
            + UUID.randomUUID().toString().replace("-", "").substring(0, 12).toUpperCase(Locale.ROOT)
            + "_";

    private static DataSource admin;
    private static JdbcLockRegistry a;
    private static JdbcLockRegistry b;
    private static JdbcLockRegistry shortA;
    private static JdbcLockRegistry shortB;

    @BeforeAll
    static void open() throws IOException, SQLException {
        admin = dataSource();
        execute(lockTableDdl().replace(DefaultLockRepository.DEFAULT_TABLE_PREFIX, PREFIX));
        a = new JdbcLockRegistry(repository(dataSource()));
        b = new JdbcLockRegistry(repository(dataSource()));
        shortA = new JdbcLockRegistry(repository(dataSource()), SHORT_EXPIRY);
        shortB = new JdbcLockRegistry(repository(dataSource()), SHORT_EXPIRY);
    }

    @AfterAll
    static void close() throws SQLException {
        if (admin != null) {
            execute("DROP TABLE IF EXISTS " + PREFIX + "LOCK");
        }
    }

    /** The {@code CREATE TABLE INT_LOCK} statement of Spring's schema script (which also creates the message tables). */
    private static String lockTableDdl() throws IOException {
        String script;
        try (InputStream in = DefaultLockRepository.class.getResourceAsStream(SCHEMA)) {
            if (in == null) {
                throw new IllegalStateException(SCHEMA + " is not on the class path: is spring-integration-jdbc?");
            }
            script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Matcher ddl = Pattern.compile("CREATE TABLE INT_LOCK\\b[^;]*").matcher(script);
        if (!ddl.find()) {
            throw new IllegalStateException(SCHEMA + " has no CREATE TABLE INT_LOCK statement");
        }
        return ddl.group();
    }

    /** A node's connections: a new one each time (no pool), each with connect and read deadlines (in seconds). */
    private static DataSource dataSource() {
        Properties deadlines = new Properties();
        deadlines.setProperty("connectTimeout", "10");
        deadlines.setProperty("socketTimeout", "30");
        DriverManagerDataSource dataSource =
                new DriverManagerDataSource(TestPostgres.jdbcUrl(), TestPostgres.user(), TestPostgres.password());
        dataSource.setConnectionProperties(deadlines);
        return dataSource;
    }

    /** A node's repository, set up as a Spring context would (outside one: no application context to look in). */
    private static DefaultLockRepository repository(DataSource dataSource) {
        DefaultLockRepository repository = new DefaultLockRepository(dataSource);
        repository.setPrefix(PREFIX);
        // As Spring Integration's reference guide advises for PostgreSQL: a failed INSERT (the key is taken) would
        // otherwise abort the transaction it runs in.
        repository.setInsertQuery(repository.getInsertQuery() + " ON CONFLICT DO NOTHING");
        repository.setTransactionManager(new DataSourceTransactionManager(dataSource));
        repository.afterPropertiesSet();
        repository.afterSingletonsInstantiated();
        repository.start();
        return repository;
    }

    private static void execute(String sql) throws SQLException {
        try (Connection connection = admin.getConnection();
                Statement statement = connection.createStatement()) {
            statement.setQueryTimeout(30);
            statement.execute(sql);
        }
    }

    @Override
    ExpirableLockRegistry<? extends DistributedLock> nodeA() {
        return a;
    }

    @Override
    ExpirableLockRegistry<? extends DistributedLock> nodeB() {
        return b;
    }

    @Override
    Class<? extends Throwable> nonOwnerUnlockException() {
        return IllegalMonitorStateException.class;
    }

    @Override
    Class<? extends Throwable> unlockAfterExpiryException() {
        return ConcurrentModificationException.class;
    }

    @Override
    ExpirableLockRegistry<? extends DistributedLock> shortExpiryNodeA() {
        return shortA;
    }

    @Override
    ExpirableLockRegistry<? extends DistributedLock> shortExpiryNodeB() {
        return shortB;
    }

    @Override
    boolean renewsALockTakenWithoutATtl() {
        return false;
    }
}
