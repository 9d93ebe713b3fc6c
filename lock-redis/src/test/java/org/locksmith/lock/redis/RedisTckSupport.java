package org.locksmith.lock.redis;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;
import org.locksmith.lock.redis.internal.LockKeys;
import org.locksmith.lock.tck.LockFaults;
import org.locksmith.lock.tck.LockTck;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * What every Redis TCK run shares: a key prefix unique to the run (the shared server is never flushed), a client
 * name per client (so {@code KILL_SESSION} finds its connections in {@code CLIENT LIST}), the store's view of a
 * key for the cleanup contracts, and the faults any Redis can suffer. Subclasses say where the server is.
 */
abstract class RedisTckSupport extends LockTck {
    /** Unique per run and per test class, so runs and classes never see each other's keys. */
    final String run = getClass().getSimpleName().replaceAll("[^A-Za-z]", "").toLowerCase()
            + Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);

    final String prefix = "locksmith-test:" + run + ":";
    private final AtomicInteger clients = new AtomicInteger();
    private final Map<LockClient, String> names = new ConcurrentHashMap<>();

    /** The server's URL without query, such as {@code redis://127.0.0.1:6379}. */
    protected abstract String baseUrl();

    /** Every node of the server (one unless a cluster), for CLIENT LIST/KILL and SCAN. */
    protected abstract List<HostAndPort> nodes();

    /** Faults beyond KILL_SESSION and DELETE_LOCK_STATE that this server allows (a private one: restarts). */
    protected Set<LockFaults.Fault> extraFaults() {
        return Set.of();
    }

    protected void restartStore() {
        throw new UnsupportedOperationException("RESTART_STORE");
    }

    protected LockFaults.Outage beginOutage() {
        throw new UnsupportedOperationException("STORE_OUTAGE");
    }

    /** The URL of a client named {@code clientName}, with the TCK's lease and this run's prefix. */
    String url(String clientName) {
        String base = baseUrl();
        return base + (base.contains("?") ? "&" : "?") + "leaseMs="
                + timings().leaseTime().toMillis()
                + "&timeoutMs=1000&connectTimeoutMs=1000&prefix=" + URLEncoder.encode(prefix, StandardCharsets.UTF_8)
                + "&clientName=" + clientName;
    }

    /** Opens a client of this server named {@code clientName}; the cluster run builds it from Jedis instead. */
    protected LockClient open(String clientName) {
        return Locks.open(url(clientName));
    }

    @Override
    protected LockClient newClient() {
        String name = run + "-" + clients.incrementAndGet();
        LockClient client = open(name);
        names.put(client, name);
        return client;
    }

    @Override
    protected Optional<String> workerUrl() {
        return Optional.of(url(run + "-worker"));
    }

    /**
     * Waits until every node has been up for the restart hold-off (the TCK's lease time, the clients' default):
     * a server a test just started, or restarted in an earlier test, grants nothing before that. The acquire script
     * takes a second off {@code uptime_in_seconds} (whole wall-clock seconds), so this waits for one more.
     */
    @BeforeEach
    void serversUpForTheRestartHoldOff() {
        long holdOffSeconds = (timings().leaseTime().toMillis() + 999) / 1000;
        for (HostAndPort node : nodes()) {
            Awaitility.await().atMost(Duration.ofSeconds(holdOffSeconds + 5)).until(() -> {
                try (Jedis jedis = admin(node)) {
                    for (String line : jedis.info("server").split("\r?\n")) {
                        if (line.startsWith("uptime_in_seconds:")) {
                            return Long.parseLong(line.substring("uptime_in_seconds:".length())
                                            .trim())
                                    >= holdOffSeconds + 1;
                        }
                    }
                    return false;
                }
            });
        }
    }

    /** {@code INFO stats} total_commands_processed, summed over the nodes. */
    @Override
    protected OptionalLong storeOperations() {
        long total = 0;
        for (HostAndPort node : nodes()) {
            try (Jedis jedis = admin(node)) {
                for (String line : jedis.info("stats").split("\r?\n")) {
                    if (line.startsWith("total_commands_processed:")) {
                        total += Long.parseLong(line.substring("total_commands_processed:".length())
                                .trim());
                    }
                }
            }
        }
        return OptionalLong.of(total);
    }

    @Override
    protected OptionalInt storeEntries(String key) {
        LockKeys keys = LockKeys.of(prefix, key);
        int count = 0;
        for (HostAndPort node : nodes()) {
            try (Jedis jedis = admin(node)) {
                count += scan(
                        jedis,
                        keys.scope().replace("*", "\\*").replace("?", "\\?").replace("[", "\\[") + "*");
            }
        }
        return OptionalInt.of(count);
    }

    private static int scan(Jedis jedis, String pattern) {
        int count = 0;
        String cursor = ScanParams.SCAN_POINTER_START;
        ScanParams params = new ScanParams().match(pattern).count(1000);
        do {
            ScanResult<String> page = jedis.scan(cursor, params);
            count += page.getResult().size();
            cursor = page.getCursor();
        } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
        return count;
    }

    /**
     * How many connections named {@code clientName} (any, if null) are blocked in a command right now: CLIENT LIST
     * flag {@code b}. Not {@code cmd=blpop}, which stays on an idle connection whose last command was one.
     */
    static int blockedClients(Jedis jedis, String clientName) {
        int n = 0;
        for (String line : jedis.clientList().split("\n")) {
            if ((clientName == null || line.contains(" name=" + clientName + " "))
                    && line.matches(".* flags=[A-Za-z]*b[A-Za-z]* .*")) {
                n++;
            }
        }
        return n;
    }

    static Jedis admin(HostAndPort node) {
        return new Jedis(
                node,
                DefaultJedisClientConfig.builder()
                        .timeoutMillis(5_000)
                        .autoNegotiateProtocol(false)
                        .build());
    }

    @Override
    protected LockFaults faults() {
        Set<LockFaults.Fault> supported = EnumSet.of(LockFaults.Fault.KILL_SESSION, LockFaults.Fault.DELETE_LOCK_STATE);
        supported.addAll(extraFaults());
        return new LockFaults() {
            @Override
            public Set<Fault> supported() {
                return supported;
            }

            @Override
            public void killSession(LockClient client) {
                String name = names.get(client);
                if (name == null) {
                    throw new IllegalArgumentException("Not a client of this test: " + client);
                }
                killClientsNamed(name);
            }

            @Override
            public void deleteLockState(String key) {
                LockKeys keys = LockKeys.of(prefix, key);
                for (HostAndPort node : nodes()) {
                    try (Jedis jedis = admin(node)) {
                        if (nodes().size() == 1 || owns(jedis, keys.slot())) {
                            jedis.del(keys.hash());
                        }
                    }
                }
            }

            @Override
            public void restartStore() {
                RedisTckSupport.this.restartStore();
            }

            @Override
            public void restartStoreEmpty() {
                RedisTckSupport.this.restartStore(); // offered only by servers that keep nothing on disk
            }

            @Override
            public Outage beginOutage() {
                return RedisTckSupport.this.beginOutage();
            }
        };
    }

    /** CLIENT KILL every connection named {@code name}, on every node: the server-side end of its sessions. */
    int killClientsNamed(String name) {
        int killed = 0;
        for (HostAndPort node : nodes()) {
            try (Jedis jedis = admin(node)) {
                for (String line : jedis.clientList().split("\n")) {
                    if (line.contains(" name=" + name + " ")) {
                        String id = line.substring(line.indexOf("id=") + 3, line.indexOf(' '));
                        jedis.clientKill(new redis.clients.jedis.params.ClientKillParams().id(id));
                        killed++;
                    }
                }
            }
        }
        return killed;
    }

    private static boolean owns(Jedis jedis, int slot) {
        String myId = jedis.clusterMyId();
        for (String line : jedis.clusterNodes().split("\n")) {
            String[] f = line.split(" ");
            if (!f[0].equals(myId)) {
                continue;
            }
            for (int i = 8; i < f.length; i++) {
                String range = f[i];
                if (range.startsWith("[")) {
                    continue;
                }
                int dash = range.indexOf('-');
                int lo = Integer.parseInt(dash < 0 ? range : range.substring(0, dash));
                int hi = Integer.parseInt(dash < 0 ? range : range.substring(dash + 1));
                if (slot >= lo && slot <= hi) {
                    return true;
                }
            }
        }
        return false;
    }
}
