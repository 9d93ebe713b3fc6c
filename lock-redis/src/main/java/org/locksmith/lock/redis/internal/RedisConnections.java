package org.locksmith.lock.redis.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.spi.LockUrl;
import redis.clients.jedis.Connection;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.SslOptions;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisException;

/** Opens the two connection pools of a backend from a lock URL, after validating every setting. */
public final class RedisConnections {

    public static final String LEASE_MS = RedisSettings.LEASE_MS;
    public static final String PREFIX = RedisSettings.PREFIX;
    public static final String CONNECT_TIMEOUT_MS = "connectTimeoutMs";
    public static final String TIMEOUT_MS = "timeoutMs";
    public static final String POOL_SIZE = "poolSize";
    public static final String WAIT_POOL_SIZE = RedisSettings.WAIT_POOL_SIZE;
    public static final String DATABASE = "database";
    public static final String CLIENT_NAME = "clientName";
    public static final String CLUSTER = "cluster";
    public static final String EVICTION_CHECK = RedisSettings.EVICTION_CHECK;
    public static final String RESTART_HOLD_OFF_MS = RedisSettings.RESTART_HOLD_OFF_MS;
    public static final String SENTINEL_MASTER = "sentinelMaster";
    public static final String WAIT_REPLICAS = RedisSettings.WAIT_REPLICAS;
    public static final String WAIT_REPLICAS_TIMEOUT_MS = RedisSettings.WAIT_REPLICAS_TIMEOUT_MS;

    /** Every URL parameter, for {@link org.locksmith.lock.spi.LockProvider#parameters()}. */
    public static final Set<String> PARAMETERS = Set.of(
            LEASE_MS,
            PREFIX,
            CONNECT_TIMEOUT_MS,
            TIMEOUT_MS,
            POOL_SIZE,
            WAIT_POOL_SIZE,
            DATABASE,
            CLIENT_NAME,
            CLUSTER,
            EVICTION_CHECK,
            RESTART_HOLD_OFF_MS,
            SENTINEL_MASTER,
            WAIT_REPLICAS,
            WAIT_REPLICAS_TIMEOUT_MS);

    public static final int DEFAULT_PORT = 6379;
    public static final int DEFAULT_SENTINEL_PORT = 26379;

    /**
     * The Maven property that Spring Boot's dependency management (and this project's parent) sets the Jedis version
     * with; named in the message when the Jedis on the class path is too old.
     */
    public static final String JEDIS_VERSION_PROPERTY = "jedis.version";

    /** The Jedis this backend is built and tested with, which the start-up message recommends. */
    static final String BUILT_WITH_JEDIS = "8.0.2";

    private RedisConnections() {}

    /**
     * Fails with a message naming {@value #JEDIS_VERSION_PROPERTY} when the Jedis on the class path lacks the client
     * classes this backend is built on ({@code RedisClient}, {@code RedisClusterClient}, {@code RedisSentinelClient}
     * and {@code SslOptions.defaults()}, all in Jedis 8; Jedis 7.0, which Spring Boot 4.0 manages, has none of them).
     *
     * @throws IllegalStateException if Jedis is older
     */
    static void requireSupportedJedis() {
        boolean supported = hasClass("redis.clients.jedis.RedisClient")
                && hasClass("redis.clients.jedis.RedisClusterClient")
                && hasClass("redis.clients.jedis.RedisSentinelClient")
                && hasMethod("redis.clients.jedis.SslOptions", "defaults");
        if (!supported) {
            throw new IllegalStateException("lock-redis needs Jedis 8.0 or newer (it is built and tested with "
                    + BUILT_WITH_JEDIS + "), but the class path has Jedis " + jedisVersion()
                    + ". Set the Maven property " + JEDIS_VERSION_PROPERTY + " to " + BUILT_WITH_JEDIS
                    + " (Spring Boot's dependency management and spring-boot-starter-parent read it), or manage"
                    + " redis.clients:jedis at " + BUILT_WITH_JEDIS + " in your dependencyManagement");
        }
    }

    /** The Jedis read from its jar's {@code pom.properties}, or "(version unknown)". */
    private static String jedisVersion() {
        try (java.io.InputStream in = RedisConnections.class
                .getClassLoader()
                .getResourceAsStream("META-INF/maven/redis.clients/jedis/pom.properties")) {
            if (in != null) {
                java.util.Properties properties = new java.util.Properties();
                properties.load(in);
                String version = properties.getProperty("version");
                if (version != null) {
                    return version;
                }
            }
        } catch (java.io.IOException | RuntimeException e) {
            // fall through: the version only decorates the message
        }
        return "(version unknown)";
    }

    private static boolean hasClass(String name) {
        try {
            Class.forName(name, false, RedisConnections.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    private static boolean hasMethod(String className, String method, Class<?>... parameters) {
        try {
            Class.forName(className, false, RedisConnections.class.getClassLoader())
                    .getMethod(method, parameters);
            return true;
        } catch (ClassNotFoundException | NoSuchMethodException | LinkageError e) {
            return false;
        }
    }

    /** Validates {@code url}, opens the pools, and checks (PING, AUTH, SELECT) that the server accepts them. */
    public static RedisLockBackend open(LockUrl url) {
        requireSupportedJedis();
        int connectTimeout = url.intParameter(CONNECT_TIMEOUT_MS, 2_000, 1, 600_000);
        int timeout = url.intParameter(TIMEOUT_MS, 2_000, 1, 600_000);
        int poolSize = url.intParameter(POOL_SIZE, RedisSettings.DEFAULT_POOL_SIZE, 1, 10_000);
        int database = database(url);
        String clientName = url.parameter(CLIENT_NAME, "locksmith");
        if (!clientName.matches("[\\x21-\\x7e]{1,64}")) {
            throw new IllegalArgumentException("Lock URL " + url + ": parameter " + CLIENT_NAME + "='" + clientName
                    + "' must be 1 to 64 printable ASCII characters without spaces (Redis CLIENT SETNAME)");
        }
        EvictionGuard.Mode evictionCheck = RedisSettings.evictionCheck(url);
        if (url.hosts().isEmpty()) {
            throw new IllegalArgumentException(
                    "Lock URL " + url + " names no host; use for example redis://127.0.0.1:6379");
        }
        String sentinelMaster = url.parameter(SENTINEL_MASTER, "");
        boolean sentinel = !sentinelMaster.isEmpty();
        if (sentinel && url.booleanParameter(CLUSTER, false)) {
            throw new IllegalArgumentException("Lock URL " + url + ": " + SENTINEL_MASTER + " names a Sentinel-managed"
                    + " master, which cannot be a cluster; drop cluster=true");
        }
        if (sentinel && !sentinelMaster.matches("[\\x21-\\x7e]{1,128}")) {
            throw new IllegalArgumentException("Lock URL " + url + ": parameter " + SENTINEL_MASTER + "='"
                    + sentinelMaster + "' must be 1 to 128 printable ASCII characters without spaces");
        }
        boolean cluster = !sentinel && url.booleanParameter(CLUSTER, url.hosts().size() > 1);
        if (cluster && database != 0) {
            throw new IllegalArgumentException(
                    "Lock URL " + url + ": Redis Cluster has only database 0, got database " + database);
        }
        if (!cluster && !sentinel && url.hosts().size() > 1) {
            throw new IllegalArgumentException(
                    "Lock URL " + url + " names several hosts but cluster=false; name one host or set cluster=true");
        }
        Set<HostAndPort> hosts = new LinkedHashSet<>();
        for (LockUrl.HostAndPort h : url.hosts()) {
            hosts.add(new HostAndPort(h.host(), h.port(sentinel ? DEFAULT_SENTINEL_PORT : DEFAULT_PORT)));
        }
        String address = (sentinel ? sentinelMaster + " via sentinels " : "")
                + hosts.stream().map(HostAndPort::toString).collect(Collectors.joining(","));
        RedisSettings settings = RedisSettings.from(url, address);

        DefaultJedisClientConfig.Builder base = DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis(connectTimeout)
                .socketTimeoutMillis(timeout)
                .database(database)
                .clientName(clientName);
        if (url.scheme().equals("rediss")) {
            // The JDK's trust store and full host name verification.
            base.sslOptions(SslOptions.defaults());
        }
        url.user().ifPresent(base::user);
        url.password().ifPresent(base::password);
        JedisClientConfig commandConfig = base.build();
        // Sentinels get the timeouts, name and TLS of the servers, not their database or credentials.
        DefaultJedisClientConfig.Builder sentinelBase = DefaultJedisClientConfig.builder()
                .autoNegotiateProtocol(false) // one question per connection: RESP2, no HELLO round trip
                .connectionTimeoutMillis(connectTimeout)
                .socketTimeoutMillis(timeout)
                .clientName(clientName);
        if (url.scheme().equals("rediss")) {
            sentinelBase.sslOptions(SslOptions.defaults());
        }
        Endpoint endpoint = new Endpoint(cluster, sentinel ? sentinelMaster : null, hosts, sentinelBase.build());

        List<AutoCloseable> owned = new ArrayList<>(2);
        try {
            UnifiedJedis commands = Clients.client(endpoint, commandConfig, pool(poolSize, timeout), timeout);
            owned.add(commands);
            // Same configuration as the command client: each BLPOP sets its own socket timeout (see WaitConnections).
            UnifiedJedis waits =
                    Clients.client(endpoint, commandConfig, pool(settings.maxBlockingWaiters(), timeout), timeout);
            owned.add(waits);
            RedisLockBackend backend = new RedisLockBackend(commands, waits, owned, settings);
            backend.verify(evictionCheck);
            return backend;
        } catch (JedisException e) {
            closeAll(owned);
            throw new LockBackendException("Redis at " + address + " is not reachable: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            closeAll(owned);
            throw e;
        }
    }

    private static int database(LockUrl url) {
        String path = url.path();
        int fromPath = -1;
        if (!path.isEmpty()) {
            if (!path.matches("\\d{1,5}")) {
                throw new IllegalArgumentException(
                        "Lock URL " + url + ": the path '/" + path + "' must be a database number, as in /0");
            }
            fromPath = Integer.parseInt(path);
        }
        int fromParameter = url.intParameter(DATABASE, -1, 0, 65_535);
        if (fromPath >= 0 && fromParameter >= 0 && fromPath != fromParameter) {
            throw new IllegalArgumentException("Lock URL " + url + " gives database " + fromPath + " in the path and "
                    + fromParameter + " in parameter " + DATABASE + "; give it once");
        }
        return Math.max(0, Math.max(fromPath, fromParameter));
    }

    private static GenericObjectPoolConfig<Connection> pool(int size, int timeoutMillis) {
        GenericObjectPoolConfig<Connection> config = new GenericObjectPoolConfig<>();
        config.setMaxTotal(size);
        config.setMaxIdle(size);
        config.setMinIdle(0);
        config.setBlockWhenExhausted(true);
        // An exhausted pool fails like an unreachable server: within the configured timeout.
        config.setMaxWait(Duration.ofMillis(timeoutMillis));
        config.setJmxEnabled(false);
        return config;
    }

    /**
     * Where the servers are: a cluster's seed nodes, a Sentinel-managed master's name and its sentinels, or one
     * server.
     */
    private record Endpoint(
            boolean cluster, String sentinelMaster, Set<HostAndPort> hosts, JedisClientConfig sentinelConfig) {}

    /**
     * Builds the clients with the Jedis 8 builders. A class of its own so that loading {@link RedisConnections} (for
     * its parameter names, or to run {@link #requireSupportedJedis()}) never loads a Jedis class an older Jedis lacks:
     * the verifier would then fail with a {@code NoClassDefFoundError} before the message naming the fix.
     */
    private static final class Clients {
        private Clients() {}

        static UnifiedJedis client(
                Endpoint endpoint,
                JedisClientConfig config,
                GenericObjectPoolConfig<Connection> pool,
                int timeoutMillis) {
            Set<HostAndPort> hosts = endpoint.hosts();
            if (endpoint.sentinelMaster() != null) {
                return SentinelRedis.open(endpoint.sentinelMaster(), hosts, endpoint.sentinelConfig(), config, pool);
            }
            if (endpoint.cluster()) {
                return RedisClusterClient.builder()
                        .nodes(hosts)
                        .clientConfig(config)
                        .poolConfig(pool)
                        .maxAttempts(3)
                        .maxTotalRetriesDuration(Duration.ofMillis(timeoutMillis))
                        .build();
            }
            return StandaloneRedis.open(hosts.iterator().next(), config, pool);
        }
    }

    private static void closeAll(List<AutoCloseable> clients) {
        for (AutoCloseable c : clients) {
            try {
                c.close();
            } catch (Exception ignored) {
                // already failing: the original exception is the one to report
            }
        }
    }
}
