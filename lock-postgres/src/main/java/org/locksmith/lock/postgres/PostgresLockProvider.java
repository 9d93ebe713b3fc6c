package org.locksmith.lock.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.postgres.internal.PostgresLockBackend;
import org.locksmith.lock.postgres.internal.PostgresSettings;
import org.locksmith.lock.spi.LockBackend;
import org.locksmith.lock.spi.LockProvider;
import org.locksmith.lock.spi.LockUrl;

/**
 * Opens PostgreSQL lock backends from {@code postgresql://} URLs:
 *
 * <pre>postgresql://user:password@host[:5432][,host2[:port]...]/database[?name=value&amp;...]</pre>
 *
 * <p>Several hosts are tried in order for the primary ({@code targetServerType=primary}): a failover to a standby
 * is followed by new connections. Parameters (all optional): {@code table} (default {@value
 * PostgresSettings#DEFAULT_TABLE}), {@code createSchema} (default true), {@code checkIntervalMs} (how often held
 * sessions are checked, default 1000), {@code sessionTimeoutMs} (the server's {@code idle_session_timeout} on a
 * session holding a lock, default five check intervals), {@code poolSize} (connections for held and waiting locks,
 * default 10), {@code timeoutMs} (connect and statement timeout, default 5000), {@code restartHoldOffMs} (how long
 * after a server starts it grants no lock, default {@code sessionTimeoutMs}; 0 turns it off), {@code sslmode} and
 * {@code applicationName} (passed to the driver). The JDBC driver (org.postgresql:postgresql) is supplied by the
 * application.
 *
 * <p>On an application's {@link DataSource} ({@link #openClient}, as {@link PostgresLocks#builder()} does) every
 * parameter but {@code sslmode} and {@code applicationName} applies; {@code poolSize} is then how many of its
 * connections may hold or wait for locks.
 */
public final class PostgresLockProvider implements LockProvider {
    private static final AtomicInteger POOLS = new AtomicInteger();

    /** Creates the provider; it does no I/O until {@link #open}. */
    public PostgresLockProvider() {}

    @Override
    public String name() {
        return "postgresql";
    }

    @Override
    public Set<String> schemes() {
        return Set.of("postgresql", "postgres");
    }

    @Override
    public String defaultUrl() {
        return "postgresql://postgres@127.0.0.1:5432/postgres";
    }

    @Override
    public Set<String> parameters() {
        return Set.of(
                "table",
                "createSchema",
                "checkIntervalMs",
                "sessionTimeoutMs",
                "poolSize",
                "timeoutMs",
                "restartHoldOffMs",
                "sslmode",
                "applicationName");
    }

    @Override
    public LockBackend open(LockUrl url) {
        PostgresSettings settings = PostgresSettings.from(url);
        String jdbcUrl = jdbcUrl(url);
        String sslMode = url.parameter("sslmode", null);
        if (sslMode != null
                && !Set.of("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
                        .contains(sslMode)) {
            throw new IllegalArgumentException("Lock URL " + url + ": sslmode '" + sslMode
                    + "' is not one of disable, allow, prefer, require, verify-ca, verify-full");
        }
        String applicationName = url.parameter("applicationName", "locksmith");
        if (!applicationName.matches("[A-Za-z0-9 ._-]{1,63}")) {
            throw new IllegalArgumentException("Lock URL " + url + ": applicationName '" + applicationName
                    + "' is invalid: use 1-63 characters from A-Z, a-z, 0-9, space, '.', '_' and '-'");
        }
        requireDriver();
        HikariDataSource pool = pool(jdbcUrl, url, settings, sslMode, applicationName);
        Properties direct = new Properties();
        pool.getDataSourceProperties().forEach(direct::put);
        url.user().ifPresent(u -> direct.setProperty("user", u));
        url.password().ifPresent(p -> direct.setProperty("password", p));
        return PostgresLockBackend.open(
                settings,
                pool,
                () -> DriverManager.getConnection(jdbcUrl, direct),
                true,
                url.hosts() + "/" + url.path());
    }

    /** {@link DataSource}. */
    @Override
    public Optional<Class<?>> applicationConnectionType() {
        return Optional.of(DataSource.class);
    }

    /** All but {@code sslmode} and {@code applicationName}, which configure the connections the provider makes. */
    @Override
    public Set<String> applicationConnectionParameters() {
        Set<String> applicable = new java.util.HashSet<>(parameters());
        applicable.removeAll(Set.of("sslmode", "applicationName"));
        return Set.copyOf(applicable);
    }

    /**
     * {@link PostgresLocks#builder()} on {@code connection}, a {@link DataSource} that the client does not close,
     * with the URL's settings, validated as by {@link #open}.
     *
     * @throws IllegalArgumentException if a setting is invalid (before any I/O)
     * @throws org.locksmith.lock.LockBackendException if the database cannot be reached or is too old
     */
    @Override
    public LockClient openClient(LockUrl url, Object connection) {
        PostgresSettings settings = PostgresSettings.from(url);
        return PostgresLocks.builder()
                .dataSource((DataSource) connection)
                .table(settings.table())
                .createSchema(settings.createSchema())
                .checkInterval(settings.checkInterval())
                .sessionTimeout(settings.sessionTimeout())
                .poolSize(settings.poolSize())
                .timeout(settings.timeout())
                .restartHoldOff(settings.restartHoldOff())
                .build();
    }

    static String jdbcUrl(LockUrl url) {
        if (url.hosts().isEmpty()) {
            throw new IllegalArgumentException(
                    "Lock URL " + url + " names no host: use postgresql://user@host:5432/database");
        }
        if (url.path().isEmpty()) {
            throw new IllegalArgumentException(
                    "Lock URL " + url + " names no database: use postgresql://user@host:5432/database");
        }
        if (!url.path().matches("[A-Za-z0-9_$-]{1,63}")) {
            throw new IllegalArgumentException("Lock URL " + url + ": database name '" + url.path()
                    + "' is invalid: use 1-63 characters from A-Z, a-z, 0-9, _, $ and -");
        }
        String hosts = url.hosts().stream()
                .map(h -> (h.host().contains(":") ? "[" + h.host() + "]" : h.host()) + ":" + h.port(5432))
                .collect(Collectors.joining(","));
        return "jdbc:postgresql://" + hosts + "/" + url.path()
                + (url.hosts().size() > 1 ? "?targetServerType=primary" : "");
    }

    private static void requireDriver() {
        try {
            DriverManager.getDriver("jdbc:postgresql://localhost/x");
        } catch (SQLException e) {
            throw new IllegalStateException("There is no JDBC driver for jdbc:postgresql: URLs on the class path, so"
                    + " postgresql:// lock URLs cannot connect: add org.postgresql:postgresql to the application's"
                    + " dependencies, or give PostgresLocks.using(...) a DataSource of your own");
        }
    }

    private static HikariDataSource pool(
            String jdbcUrl, LockUrl url, PostgresSettings settings, String sslMode, String applicationName) {
        HikariConfig config = new HikariConfig();
        config.setPoolName("locksmith-postgres-" + POOLS.incrementAndGet());
        config.setJdbcUrl(jdbcUrl);
        url.user().ifPresent(config::setUsername);
        url.password().ifPresent(config::setPassword);
        // every held or waiting lock has one connection; one more serves the schema check at open
        config.setMaximumPoolSize(settings.poolSize() + 1);
        config.setMinimumIdle(0);
        config.setAutoCommit(true);
        long timeout = settings.timeout().toMillis();
        config.setConnectionTimeout(timeout);
        config.setValidationTimeout(Math.max(250, Math.min(timeout / 2, 5000)));
        config.setInitializationFailTimeout(-1);
        // pgjdbc counts these in seconds
        String seconds = String.valueOf(Math.max(1, (timeout + 999) / 1000));
        config.addDataSourceProperty("connectTimeout", seconds);
        config.addDataSourceProperty("loginTimeout", seconds);
        config.addDataSourceProperty("cancelSignalTimeout", seconds);
        config.addDataSourceProperty("tcpKeepAlive", "true");
        config.addDataSourceProperty("ApplicationName", applicationName);
        if (sslMode != null) {
            config.addDataSourceProperty("sslmode", sslMode);
        }
        return new HikariDataSource(config);
    }
}
