package org.locksmith.lock.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.client.FourLetterWordMain;
import org.apache.zookeeper.common.X509Exception;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.RedisProtocol;

/**
 * Where the four stores of one benchmark run are, and what they say about themselves (versions, command counters).
 *
 * <p>Redis, MySQL and PostgreSQL are found as the tests find them: {@code LOCKSMITH_TEST_REDIS_URL}, {@code
 * LOCKSMITH_TEST_MYSQL_URL} and {@code LOCKSMITH_TEST_POSTGRES_URL}, else the machine's services on their default
 * ports. ZooKeeper is {@code
 * LOCKSMITH_TEST_ZOOKEEPER_URL} (its {@code srvr} four-letter word must be allowed) or, by default, a ZooKeeper
 * server JVM started by the run with ZooKeeper's defaults (the transaction log is fsynced). Every contender of
 * a store talks to the same server in the same run, so that ratios between them hold on a noisy machine.
 *
 * <p>A forked JMH JVM receives the same stores through {@link #systemProperties()} and {@link #fromSystemProperties()},
 * including the run's unique {@link #runId()} that keeps its keys and tables apart from every other run.
 */
public final class Stores implements AutoCloseable {
    private static final String P = "locksmith.bench.";

    private final String redisUrl;
    private final String mysqlUrl;
    private final String postgresUrl;
    private final String zookeeperConnect;
    private final String runId;
    private final Process zookeeperServer;

    private Stores(
            String redisUrl, String mysqlUrl, String postgresUrl, String zookeeperConnect, String runId, Process zk) {
        this.redisUrl = redisUrl;
        this.mysqlUrl = mysqlUrl;
        this.postgresUrl = postgresUrl;
        this.zookeeperConnect = zookeeperConnect;
        this.runId = runId;
        this.zookeeperServer = zk;
    }

    /**
     * Finds Redis, MySQL and PostgreSQL, starts a ZooKeeper server JVM unless one is given, and checks all four
     * answer.
     */
    public static Stores start() {
        String redis = env("LOCKSMITH_TEST_REDIS_URL", "redis://127.0.0.1:6379");
        String mysql = env("LOCKSMITH_TEST_MYSQL_URL", "mysql://root@127.0.0.1:3306/test");
        String postgres = env("LOCKSMITH_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test");
        String zkUrl = System.getenv("LOCKSMITH_TEST_ZOOKEEPER_URL");
        String runId = "b" + Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);
        Process zk = null;
        String zkConnect;
        if (zkUrl != null && !zkUrl.isBlank()) {
            zkConnect = URI.create(zkUrl).getAuthority();
        } else {
            int port = freePort();
            zkConnect = "127.0.0.1:" + port;
            zk = startZooKeeper(port);
        }
        Stores stores = new Stores(redis, mysql, postgres, zkConnect, runId, zk);
        if (zk != null) {
            stores.awaitZooKeeper(zk);
        }
        try {
            stores.check();
        } catch (RuntimeException e) {
            stores.close();
            throw e;
        }
        return stores;
    }

    /** The stores of the parent run, in a forked JMH JVM (or in the same JVM when JMH does not fork). */
    public static Stores fromSystemProperties() {
        return new Stores(
                required(P + "redis"),
                required(P + "mysql"),
                required(P + "postgres"),
                required(P + "zookeeper"),
                required(P + "runId"),
                null);
    }

    /** The system properties that let {@link #fromSystemProperties()} find these stores. */
    public Map<String, String> systemProperties() {
        return Map.of(
                P + "redis",
                redisUrl,
                P + "mysql",
                mysqlUrl,
                P + "postgres",
                postgresUrl,
                P + "zookeeper",
                zookeeperConnect,
                P + "runId",
                runId);
    }

    /**
     * Starts ZooKeeper ({@code ZooKeeperServerMain}, the jars of this class path) in a JVM of its own, so that its
     * data tree does not count against the heap S6 weighs in this process, and its threads do not share this JVM's
     * safepoints. Default server settings (the transaction log is fsynced), bound to 127.0.0.1.
     */
    private static Process startZooKeeper(int port) {
        try {
            Path dir = Files.createTempDirectory("locksmith-bench-zk");
            Path config = dir.resolve("zoo.cfg");
            Files.writeString(
                    config,
                    String.join(
                            "\n",
                            "tickTime=2000",
                            "dataDir=" + dir.resolve("data"),
                            "clientPort=" + port,
                            "clientPortAddress=127.0.0.1",
                            "maxClientCnxns=0",
                            "4lw.commands.whitelist=srvr",
                            "admin.enableServer=false",
                            ""));
            // The server need not run on the JVM under test: a JVM unpacked outside its system (a Java 21 on
            // this Debian 12 machine) cannot start its own java.home/bin/java, so the build names one that can.
            String java = System.getProperty(
                    "locksmith.bench.serverJava",
                    Path.of(System.getProperty("java.home"), "bin", "java").toString());
            return new ProcessBuilder(
                            java,
                            "-Xmx512m",
                            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                            "-cp",
                            System.getProperty("java.class.path"),
                            "org.apache.zookeeper.server.ZooKeeperServerMain",
                            config.toString())
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("server.log").toFile())
                    .start();
        } catch (IOException e) {
            throw new IllegalStateException("Could not start a ZooKeeper server JVM: " + e, e);
        }
    }

    private void awaitZooKeeper(Process zk) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                fourLetterWord("srvr");
                return;
            } catch (RuntimeException notYet) {
                if (!zk.isAlive() || System.nanoTime() > deadline) {
                    close();
                    throw new IllegalStateException("The ZooKeeper server JVM did not answer on " + zookeeperConnect
                            + " within 30 s" + (zk.isAlive() ? "" : " (it exited with " + zk.exitValue() + ")"));
                }
            }
            try {
                TimeUnit.MILLISECONDS.sleep(100); // polling a starting server: there is nothing to wait on
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                close();
                throw new IllegalStateException("interrupted while starting ZooKeeper", e);
            }
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void check() {
        try (Jedis jedis = redis()) {
            jedis.ping();
        } catch (RuntimeException e) {
            throw new IllegalStateException(
                    "Redis at " + redisUrl + " does not answer (" + e.getMessage()
                            + "): start it (redis-server --port 6379) or set LOCKSMITH_TEST_REDIS_URL",
                    e);
        }
        try (Connection c = mysqlConnection()) {
            c.isValid(2);
        } catch (SQLException e) {
            throw new IllegalStateException(
                    "MySQL at " + mysqlUrl + " does not answer (" + e.getMessage()
                            + "): start MariaDB/MySQL or set LOCKSMITH_TEST_MYSQL_URL",
                    e);
        }
        try (Connection c = postgresConnection()) {
            c.isValid(2);
        } catch (SQLException e) {
            throw new IllegalStateException(
                    "PostgreSQL at " + postgresJdbcUrl() + " does not answer (" + e.getMessage()
                            + "): start PostgreSQL or set LOCKSMITH_TEST_POSTGRES_URL",
                    e);
        }
        fourLetterWord("srvr");
    }

    /** A short unique id of this run; every key, prefix and table of the run contains it. */
    public String runId() {
        return runId;
    }

    /** The Redis URL, as Locksmith takes it ({@code redis://[user:password@]host:port[/db]}). */
    public String redisUrl() {
        return redisUrl;
    }

    /** The MySQL URL, as Locksmith takes it ({@code mysql://user[:password]@host:port/database}). */
    public String mysqlUrl() {
        return mysqlUrl;
    }

    /** The PostgreSQL URL, as Locksmith takes it ({@code postgresql://user[:password]@host:port/database}). */
    public String postgresUrl() {
        return postgresUrl;
    }

    /** ZooKeeper's connect string ({@code host:port}). */
    public String zookeeperConnect() {
        return zookeeperConnect;
    }

    /** Redis host. */
    public String redisHost() {
        return URI.create(redisUrl).getHost();
    }

    /** Redis port. */
    public int redisPort() {
        int port = URI.create(redisUrl).getPort();
        return port < 0 ? 6379 : port;
    }

    /** Redis password, or null. */
    public String redisPassword() {
        String info = URI.create(redisUrl).getUserInfo();
        return info == null || !info.contains(":") ? null : info.substring(info.indexOf(':') + 1);
    }

    /** Redis user (ACL), or null for the default user. */
    public String redisUser() {
        String info = URI.create(redisUrl).getUserInfo();
        if (info == null) {
            return null;
        }
        String user = info.contains(":") ? info.substring(0, info.indexOf(':')) : info;
        return user.isEmpty() ? null : user;
    }

    /** Redis database number. */
    public int redisDatabase() {
        String path = URI.create(redisUrl).getPath();
        return path == null || path.length() <= 1 ? 0 : Integer.parseInt(path.substring(1));
    }

    /** A fresh plain connection to Redis, for counters and floors; close it after use. */
    public Jedis redis() {
        return redis(5_000);
    }

    /** A fresh plain connection to Redis whose reads wait at most {@code socketTimeoutMillis} (0: forever). */
    public Jedis redis(int socketTimeoutMillis) {
        DefaultJedisClientConfig.Builder config = DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis(5_000)
                .socketTimeoutMillis(socketTimeoutMillis)
                .protocol(RedisProtocol.RESP2)
                .database(redisDatabase());
        if (redisPassword() != null) {
            config.user(redisUser()).password(redisPassword());
        }
        return new Jedis(new HostAndPort(redisHost(), redisPort()), config.build());
    }

    /** The JDBC URL of the MySQL database ({@code jdbc:mysql://host:port/db}), without credentials. */
    public String jdbcUrl() {
        URI uri = URI.create(mysqlUrl);
        int port = uri.getPort() < 0 ? 3306 : uri.getPort();
        return "jdbc:mysql://" + uri.getHost() + ":" + port + uri.getPath();
    }

    /** The MySQL user. */
    public String mysqlUser() {
        return user(mysqlUrl, "root");
    }

    /** The MySQL password (empty for none). */
    public String mysqlPassword() {
        return password(mysqlUrl);
    }

    /** A fresh plain JDBC connection, for counters, floors and DDL; close it after use. */
    public Connection mysqlConnection() throws SQLException {
        Properties props = new Properties();
        props.setProperty("user", mysqlUser());
        props.setProperty("password", mysqlPassword());
        props.setProperty("connectTimeout", "5000");
        return DriverManager.getConnection(jdbcUrl(), props);
    }

    /** The JDBC URL of the PostgreSQL database ({@code jdbc:postgresql://host:port/db}), without credentials. */
    public String postgresJdbcUrl() {
        URI uri = URI.create(postgresUrl);
        int port = uri.getPort() < 0 ? 5432 : uri.getPort();
        return "jdbc:postgresql://" + uri.getHost() + ":" + port + uri.getPath();
    }

    /** The PostgreSQL user. */
    public String postgresUser() {
        return user(postgresUrl, "postgres");
    }

    /** The PostgreSQL password (empty for none). */
    public String postgresPassword() {
        return password(postgresUrl);
    }

    /** A fresh plain JDBC connection to PostgreSQL, for floors, versions and DDL; close it after use. */
    public Connection postgresConnection() throws SQLException {
        Properties props = new Properties();
        props.setProperty("user", postgresUser());
        props.setProperty("password", postgresPassword());
        props.setProperty("connectTimeout", "5");
        return DriverManager.getConnection(postgresJdbcUrl(), props);
    }

    private static String user(String url, String fallback) {
        String info = URI.create(url).getUserInfo();
        return info == null ? fallback : info.contains(":") ? info.substring(0, info.indexOf(':')) : info;
    }

    private static String password(String url) {
        String info = URI.create(url).getUserInfo();
        return info == null || !info.contains(":") ? "" : info.substring(info.indexOf(':') + 1);
    }

    /** The answer of a ZooKeeper four-letter word such as {@code srvr}. */
    public String fourLetterWord(String word) {
        String host = zookeeperConnect.substring(0, zookeeperConnect.lastIndexOf(':'));
        int port = Integer.parseInt(zookeeperConnect.substring(zookeeperConnect.lastIndexOf(':') + 1));
        try {
            String answer = FourLetterWordMain.send4LetterWord(host, port, word, false, 2000);
            if (answer.contains("is not executed because it is not in the whitelist")) {
                throw new IllegalStateException("ZooKeeper at " + zookeeperConnect + " refuses '" + word
                        + "': allow it with 4lw.commands.whitelist=srvr (the bench counts requests with it)");
            }
            return answer;
        } catch (IOException | X509Exception.SSLContextException e) {
            throw new IllegalStateException(
                    "ZooKeeper at " + zookeeperConnect + " does not answer '" + word
                            + "': set LOCKSMITH_TEST_ZOOKEEPER_URL or leave it unset for a server started by the run",
                    e);
        }
    }

    /** Version lines of the four servers, for the report. */
    public List<String> serverVersions() {
        List<String> versions = new ArrayList<>();
        try (Jedis jedis = redis()) {
            versions.add("Redis " + infoField(jedis.info("server"), "redis_version") + " at " + redisHost() + ":"
                    + redisPort());
        }
        try (Connection c = mysqlConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT VERSION(), @@innodb_flush_log_at_trx_commit")) {
            rs.next();
            versions.add("MySQL-compatible server " + rs.getString(1) + " at " + jdbcUrl()
                    + " (innodb_flush_log_at_trx_commit=" + rs.getString(2) + ")");
        } catch (SQLException e) {
            versions.add("MySQL version unknown: " + e.getMessage());
        }
        try (Connection c = postgresConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT current_setting('server_version'),"
                        + " current_setting('fsync'), current_setting('synchronous_commit')")) {
            rs.next();
            versions.add("PostgreSQL " + rs.getString(1) + " at " + postgresJdbcUrl() + " (fsync=" + rs.getString(2)
                    + ", synchronous_commit=" + rs.getString(3) + ")");
        } catch (SQLException e) {
            versions.add("PostgreSQL version unknown: " + e.getMessage());
        }
        String srvr = fourLetterWord("srvr");
        String zkVersion = srvr.lines()
                .filter(l -> l.startsWith("Zookeeper version:"))
                .map(l -> l.substring("Zookeeper version:".length()).trim().replaceAll(",.*", ""))
                .findFirst()
                .orElse("?");
        versions.add("ZooKeeper " + zkVersion + " at " + zookeeperConnect
                + (zookeeperServer != null ? " (a server JVM started by the run, default settings: fsync on)" : ""));
        return versions;
    }

    /**
     * Removes what this run left in the stores: its Redis keys (all under {@code lsbench:<runId>:}), its MySQL tables,
     * its PostgreSQL tables and functions and, on an external ZooKeeper, its nodes. Nothing of another run or application is touched.
     */
    public void removeRunState() {
        try (Jedis jedis = redis()) {
            String cursor = redis.clients.jedis.params.ScanParams.SCAN_POINTER_START;
            var params = new redis.clients.jedis.params.ScanParams()
                    .match("*lsbench:" + runId + ":*")
                    .count(1000);
            do {
                var page = jedis.scan(cursor, params);
                if (!page.getResult().isEmpty()) {
                    jedis.del(page.getResult().toArray(String[]::new));
                }
                cursor = page.getCursor();
            } while (!cursor.equals(redis.clients.jedis.params.ScanParams.SCAN_POINTER_START));
        } catch (RuntimeException e) {
            System.err.println("[bench] could not remove this run's Redis keys: " + e);
        }
        try (Connection c = mysqlConnection();
                Statement s = c.createStatement()) {
            List<String> tables = new ArrayList<>();
            try (ResultSet rs = s.executeQuery("SELECT table_name FROM information_schema.tables"
                    + " WHERE table_schema = DATABASE() AND LOWER(table_name) LIKE 'lsbench\\_" + runId + "\\_%'")) {
                while (rs.next()) {
                    tables.add(rs.getString(1));
                }
            }
            for (String table : tables) {
                s.execute("DROP TABLE `" + table + "`");
            }
        } catch (SQLException e) {
            System.err.println("[bench] could not drop this run's MySQL tables: " + e);
        }
        try (Connection c = postgresConnection();
                Statement s = c.createStatement()) {
            List<String> drops = new ArrayList<>();
            String like = "'lsbench\\_" + runId + "\\_%'";
            try (ResultSet rs = s.executeQuery("SELECT format('DROP FUNCTION %s', p.oid::regprocedure) FROM pg_proc p"
                    + " WHERE p.pronamespace = current_schema()::regnamespace AND p.proname LIKE " + like
                    + " UNION ALL SELECT format('DROP TABLE %I', tablename) FROM pg_tables"
                    + " WHERE schemaname = current_schema() AND tablename LIKE " + like)) {
                while (rs.next()) {
                    drops.add(rs.getString(1));
                }
            }
            for (String drop : drops) {
                s.execute(drop);
            }
        } catch (SQLException e) {
            System.err.println("[bench] could not drop this run's PostgreSQL tables: " + e);
        }
        if (zookeeperServer == null) {
            try (var curator = org.apache.curator.framework.CuratorFrameworkFactory.newClient(
                    zookeeperConnect, 30_000, 5_000, new org.apache.curator.retry.RetryOneTime(100))) {
                curator.start();
                curator.blockUntilConnected(10, TimeUnit.SECONDS);
                for (String root : List.of("/lsbench-" + runId, "/lsbench-" + runId + "-curator")) {
                    if (curator.checkExists().forPath(root) != null) {
                        curator.delete().deletingChildrenIfNeeded().forPath(root);
                    }
                }
            } catch (Exception e) {
                System.err.println("[bench] could not remove this run's ZooKeeper nodes: " + e);
            }
        }
    }

    static String infoField(String info, String field) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(field + ":")) {
                return line.substring(field.length() + 1).trim();
            }
        }
        throw new IllegalStateException("Redis INFO has no " + field);
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value.trim();
    }

    private static String required(String property) {
        String value = System.getProperty(property);
        if (value == null) {
            throw new IllegalStateException(
                    "System property " + property + " is not set: the benchmark JVM was not" + " started by BenchMain");
        }
        return value;
    }

    @Override
    public void close() {
        if (zookeeperServer != null && zookeeperServer.isAlive()) {
            zookeeperServer.destroy();
            try {
                if (!zookeeperServer.waitFor(10, TimeUnit.SECONDS)) {
                    zookeeperServer.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                zookeeperServer.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public String toString() {
        return String.format(
                Locale.ROOT,
                "redis %s, mysql %s, postgresql %s, zookeeper %s",
                redisUrl,
                jdbcUrl(),
                postgresJdbcUrl(),
                zookeeperConnect);
    }
}
