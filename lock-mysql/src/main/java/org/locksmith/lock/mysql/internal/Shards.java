package org.locksmith.lock.mysql.internal;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.locksmith.lock.jdbc.internal.Connector;

/** Builds {@link Shard}s: HikariCP pools for a URL's databases, or wrappers around the user's data sources. */
public final class Shards {
    private static final AtomicInteger POOLS = new AtomicInteger();

    private Shards() {}

    /** One database given by URL parts; the JDBC driver is the one on the class path for {@code jdbc:mysql:}. */
    public record Target(String host, int port, String database) {
        public String name() {
            return host + ":" + port + "/" + database;
        }
    }

    /**
     * The JDBC URL scheme for URL-opened clients: {@code mysql} (mysql-connector-j, which serves MySQL and MariaDB
     * servers) or {@code mariadb} (MariaDB Connector/J). {@code auto} takes the first of these a driver on the
     * class path accepts. Checked before any connection.
     *
     * @throws IllegalArgumentException for another value
     * @throws IllegalStateException naming the driver to add if none accepts the scheme
     */
    public static String jdbcScheme(String driver) {
        switch (driver) {
            case "mysql", "mariadb" -> {
                if (!accepts(driver)) {
                    throw new IllegalStateException("driver=" + driver + " asks for jdbc:" + driver + ": URLs, but no"
                            + " JDBC driver on the class path accepts them: add " + artifact(driver)
                            + " to the application's dependencies");
                }
                return driver;
            }
            case "auto" -> {
                for (String scheme : new String[] {"mysql", "mariadb"}) {
                    if (accepts(scheme)) {
                        return scheme;
                    }
                }
                throw new IllegalStateException("There is no JDBC driver for jdbc:mysql: or jdbc:mariadb: URLs on the"
                        + " class path, so mysql:// lock URLs cannot connect: add com.mysql:mysql-connector-j (it"
                        + " serves MySQL and MariaDB servers) or org.mariadb.jdbc:mariadb-java-client to the"
                        + " application's dependencies, or give MySqlLocks.using(...) a DataSource of your own");
            }
            default ->
                throw new IllegalArgumentException("driver=" + driver
                        + " is not one of auto, mysql (mysql-connector-j), mariadb (MariaDB Connector/J)");
        }
    }

    private static boolean accepts(String scheme) {
        try {
            DriverManager.getDriver("jdbc:" + scheme + "://127.0.0.1:3306/test");
            return true;
        } catch (SQLException e) {
            return false;
        }
    }

    private static String artifact(String scheme) {
        return scheme.equals("mysql") ? "com.mysql:mysql-connector-j" : "org.mariadb.jdbc:mariadb-java-client";
    }

    /**
     * Pools for one database: a pool of {@code poolSize} for the strategy's lock statements (manual commit and READ
     * COMMITTED for a strategy that {@linkplain Strategy#holdsTransaction holds a transaction}, so no round trip
     * switches modes, else autocommit), and for a strategy that holds a transaction also a small separate
     * autocommit pool for fencing tokens (written outside the lock transaction).
     *
     * @param strategy the settings' strategy
     * @param scheme the JDBC URL scheme, from {@link #jdbcScheme}
     * @param sslMode the driver's {@code sslMode} property, or null for the driver's default
     */
    public static Shard pooled(
            Target target,
            String user,
            String password,
            MySqlSettings settings,
            Strategy strategy,
            String scheme,
            String sslMode) {
        String jdbcUrl = "jdbc:" + scheme + "://"
                + (target.host().contains(":") ? "[" + target.host() + "]" : target.host()) + ":" + target.port()
                + "/" + target.database();
        List<HikariDataSource> owned = new ArrayList<>();
        try {
            boolean transaction = strategy.holdsTransaction();
            HikariDataSource locks = pool(
                    jdbcUrl, user, password, sslMode, settings, settings.poolSize(), !transaction, strategy.poolRole());
            owned.add(locks);
            Properties direct = new Properties();
            locks.getDataSourceProperties().forEach(direct::put);
            if (user != null) {
                direct.setProperty("user", user);
            }
            if (password != null) {
                direct.setProperty("password", password);
            }
            Connector connector = () -> DriverManager.getConnection(jdbcUrl, direct);
            if (!transaction) {
                return new Shard(target.name(), locks, false, locks, settings.poolSize(), owned)
                        .connectDirectly(connector);
            }
            HikariDataSource fence = pool(jdbcUrl, user, password, sslMode, settings, 2, true, "fence");
            owned.add(fence);
            return new Shard(target.name(), locks, false, fence, settings.poolSize(), owned).connectDirectly(connector);
        } catch (RuntimeException e) {
            owned.forEach(HikariDataSource::close);
            throw e;
        }
    }

    private static HikariDataSource pool(
            String jdbcUrl,
            String user,
            String password,
            String sslMode,
            MySqlSettings settings,
            int size,
            boolean autoCommit,
            String role) {
        HikariConfig config = new HikariConfig();
        config.setPoolName("locksmith-mysql-" + role + "-" + POOLS.incrementAndGet());
        config.setJdbcUrl(jdbcUrl);
        if (user != null) {
            config.setUsername(user);
        }
        if (password != null) {
            config.setPassword(password);
        }
        config.setMaximumPoolSize(size);
        // No idle connections kept open up front: a client that holds few locks uses few connections.
        config.setMinimumIdle(0);
        config.setAutoCommit(autoCommit);
        if (!autoCommit) {
            config.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
        }
        long timeout = settings.timeout().toMillis();
        config.setConnectionTimeout(timeout);
        config.setValidationTimeout(Math.max(250, Math.min(timeout / 2, 5000)));
        // The backend connects itself at open (to detect the server and create the schema): no eager fill here.
        config.setInitializationFailTimeout(-1);
        config.addDataSourceProperty("connectTimeout", String.valueOf(timeout));
        config.addDataSourceProperty("tcpKeepAlive", "true");
        if (sslMode != null) {
            config.addDataSourceProperty("sslMode", sslMode);
        }
        return new HikariDataSource(config);
    }

    /**
     * A shard over a data source the application owns (not closed by the backend). Lock connections are switched to
     * manual commit at READ COMMITTED ({@code row}) or autocommit, and every setting changed is put back before a
     * connection returns to the application's pool. {@code lockConnections} of them at most are lent for locks at once, so that the remaining ones serve
     * fencing tokens.
     */
    public static Shard external(String name, DataSource dataSource, int lockConnections) {
        return new Shard(name, dataSource, true, dataSource, lockConnections, List.of());
    }

    /** The share of an application's HikariCP pool lent to locks by default: a quarter of its maximum size. */
    public static final int DEFAULT_SHARE_DIVISOR = 4;

    /** Connections lent to locks by default from a data source whose size is unknown (not HikariCP). */
    public static final int DEFAULT_UNKNOWN_POOL_SHARE = 2;

    /**
     * How many connections of an application's data source may be lent to locks at once: {@code requested} if
     * given, else a quarter of a HikariCP pool's maximum size (at least 1), else {@value
     * #DEFAULT_UNKNOWN_POOL_SHARE}. Locks hold their connection while held or waited for, so a large share lets
     * waiters starve the application, the holders' own work included. A strategy that {@linkplain
     * Strategy#holdsTransaction holds a transaction} ({@code row}) needs one service connection beside its holders
     * (fencing tokens are written outside the lock transaction); {@code named} issues tokens on the holding session
     * and {@code lease} holds no connection.
     *
     * @throws IllegalArgumentException if the share and the service connections would leave a HikariCP pool's
     *     application no connection
     */
    public static int lockConnections(String name, DataSource dataSource, Strategy strategy, Integer requested) {
        int service = strategy.holdsTransaction() ? 1 : 0;
        if (dataSource instanceof HikariDataSource hikari) {
            int max = hikari.getMaximumPoolSize();
            int available = max - service - 1; // at least one connection stays the application's
            if (available < 1) {
                throw new IllegalArgumentException("Data source '" + name + "' (HikariCP pool " + hikari.getPoolName()
                        + ") has maximumPoolSize=" + max + ", too small to share with the "
                        + strategy.kind().urlValue()
                        + " strategy: it needs one connection per lock held or waited for"
                        + (service > 0 ? " plus " + service + " for fencing tokens" : "")
                        + ", and the application keeps at least one; use maximumPoolSize >= " + (2 + service));
            }
            if (requested != null && requested > available) {
                throw new IllegalArgumentException("poolSize(" + requested + ") for data source '" + name
                        + "' would leave its application no connection: maximumPoolSize=" + max
                        + (service > 0 ? " less " + service + " for fencing tokens" : "")
                        + " less 1 for the application = " + available
                        + "; lower poolSize or raise maximumPoolSize");
            }
            return requested != null ? requested : Math.min(available, Math.max(1, max / DEFAULT_SHARE_DIVISOR));
        }
        return requested != null ? requested : DEFAULT_UNKNOWN_POOL_SHARE;
    }
}
