package org.locksmith.lock.mysql;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.mysql.internal.MySqlLockBackend;
import org.locksmith.lock.mysql.internal.MySqlSettings;
import org.locksmith.lock.mysql.internal.Shard;
import org.locksmith.lock.mysql.internal.Shards;
import org.locksmith.lock.mysql.internal.Strategy;
import org.locksmith.lock.spi.LockBackend;
import org.locksmith.lock.spi.LockProvider;
import org.locksmith.lock.spi.LockUrl;

/**
 * Opens MySQL/MariaDB lock backends from {@code mysql://} URLs:
 *
 * <pre>mysql://user:password@host[:3306][,host2[:port]...]/database[,database2...][?name=value&amp;...]</pre>
 *
 * <p>Several databases make shards, each key living on one of them (rendezvous hashing): {@code n} hosts with
 * {@code n} databases pair up in order; one host with several databases, or several hosts with one database, use
 * every combination. Parameters (all optional): {@code strategy} (row|lease|named, default row), {@code table}
 * (default {@value MySqlSettings#DEFAULT_TABLE}), {@code createSchema} (default true), {@code leaseMs} (lease
 * strategy, default 30000), {@code checkIntervalMs} (row/named: how often held sessions are pinged, default 1000),
 * {@code sessionTimeoutMs} (row/named: the server's {@code wait_timeout} on lock connections, whole seconds, default
 * five check intervals),
 * {@code poolSize} (connections per shard for held and waiting locks, default 10), {@code timeoutMs} (connect and
 * statement timeout, default 5000), {@code restartHoldOffMs} (row/named: how long after a server starts it grants
 * no lock, default {@code sessionTimeoutMs}; 0 turns it off). The JDBC driver ({@code jdbc:mysql:}, such as mysql-connector-j) is supplied
 * by the application.
 *
 * <p>On an application's {@link DataSource} ({@link #openClient}, one shard, as {@link MySqlLocks#builder()} does)
 * every parameter but {@code driver} and {@code sslMode} applies; {@code poolSize} is then how many of its
 * connections may hold or wait for locks (default: a quarter of a HikariCP pool, else 2).
 */
public final class MySqlLockProvider implements LockProvider {

    /** Creates the provider; it does no I/O until {@link #open}. */
    public MySqlLockProvider() {}

    @Override
    public String name() {
        return "mysql";
    }

    @Override
    public Set<String> schemes() {
        return Set.of("mysql");
    }

    @Override
    public String defaultUrl() {
        return "mysql://root@127.0.0.1:3306/test";
    }

    @Override
    public Set<String> parameters() {
        return Set.of(
                "strategy",
                "table",
                "createSchema",
                "leaseMs",
                "checkIntervalMs",
                "sessionTimeoutMs",
                "poolSize",
                "timeoutMs",
                "replaceShardMap",
                "restartHoldOffMs",
                "driver",
                "sslMode");
    }

    @Override
    public LockBackend open(LockUrl url) {
        MySqlSettings settings = MySqlSettings.from(url);
        List<Shards.Target> targets = targets(url);
        String scheme = Shards.jdbcScheme(url.parameter("driver", "auto"));
        String sslMode = url.parameter("sslMode", null);
        if (sslMode != null && !sslMode.matches("[A-Za-z_-]{1,32}")) {
            throw new IllegalArgumentException("Lock URL " + url + ": sslMode '" + sslMode + "' is not a driver's"
                    + " sslMode value (mysql-connector-j: DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY;"
                    + " MariaDB Connector/J: disable, trust, verify-ca, verify-full)");
        }
        Strategy strategy = Strategy.of(settings.strategy(), settings.table(), settings.leaseTime());
        List<Shard> shards = new ArrayList<>();
        try {
            for (Shards.Target target : targets) {
                shards.add(Shards.pooled(
                        target,
                        url.user().orElse(null),
                        url.password().orElse(null),
                        settings,
                        strategy,
                        scheme,
                        sslMode));
            }
            return new MySqlLockBackend(settings, strategy, shards);
        } catch (RuntimeException e) {
            shards.forEach(Shard::close);
            throw e;
        }
    }

    /** {@link DataSource}. */
    @Override
    public Optional<Class<?>> applicationConnectionType() {
        return Optional.of(DataSource.class);
    }

    /** All but {@code driver} and {@code sslMode}, which configure the connections the provider would make. */
    @Override
    public Set<String> applicationConnectionParameters() {
        Set<String> applicable = new java.util.HashSet<>(parameters());
        applicable.removeAll(Set.of("driver", "sslMode"));
        return Set.copyOf(applicable);
    }

    /**
     * {@link MySqlLocks#builder()} on {@code connection}, a {@link DataSource} that the client does not close, as
     * its one shard, with the URL's settings (validated as by {@link #open}; {@code poolSize} only when given, so
     * that the builder's default fits the data source).
     *
     * @throws IllegalArgumentException if a setting is invalid (before any I/O), or a HikariCP data source is too
     *     small for {@code poolSize}
     * @throws org.locksmith.lock.LockBackendException if the database cannot be reached
     */
    @Override
    public LockClient openClient(LockUrl url, Object connection) {
        MySqlSettings settings = MySqlSettings.from(url);
        MySqlLocks.Builder builder = MySqlLocks.builder()
                .dataSource((DataSource) connection)
                .strategy(settings.strategy())
                .table(settings.table())
                .createSchema(settings.createSchema())
                .leaseTime(settings.leaseTime())
                .checkInterval(settings.checkInterval())
                .sessionTimeout(settings.sessionTimeout())
                .timeout(settings.timeout())
                .restartHoldOff(settings.restartHoldOff())
                .replaceShardMap(settings.replaceShardMap());
        if (url.parameter("poolSize").isPresent()) {
            builder.poolSize(settings.poolSize());
        }
        return builder.build();
    }

    static List<Shards.Target> targets(LockUrl url) {
        if (url.hosts().isEmpty()) {
            throw new IllegalArgumentException("Lock URL " + url + " names no host: use mysql://host:3306/database");
        }
        if (url.path().isEmpty()) {
            throw new IllegalArgumentException(
                    "Lock URL " + url + " names no database: use mysql://host:3306/database");
        }
        List<String> databases = List.of(url.path().split(",", -1));
        for (String db : databases) {
            if (!db.matches("[A-Za-z0-9_$-]{1,64}")) {
                throw new IllegalArgumentException("Lock URL " + url + ": database name '" + db
                        + "' is invalid: use 1-64 characters from A-Z, a-z, 0-9, _, $ and -");
            }
        }
        List<LockUrl.HostAndPort> hosts = url.hosts();
        List<Shards.Target> targets = new ArrayList<>();
        if (hosts.size() == databases.size()) {
            for (int i = 0; i < hosts.size(); i++) {
                targets.add(new Shards.Target(hosts.get(i).host(), hosts.get(i).port(3306), databases.get(i)));
            }
        } else if (hosts.size() == 1 || databases.size() == 1) {
            for (LockUrl.HostAndPort h : hosts) {
                for (String db : databases) {
                    targets.add(new Shards.Target(h.host(), h.port(3306), db));
                }
            }
        } else {
            throw new IllegalArgumentException("Lock URL " + url + " names " + hosts.size() + " hosts and "
                    + databases.size() + " databases: give one of each per shard, or one host or one database");
        }
        if (targets.stream().map(Shards.Target::name).distinct().count() != targets.size()) {
            throw new IllegalArgumentException("Lock URL " + url + " names the same database twice");
        }
        return targets;
    }
}
