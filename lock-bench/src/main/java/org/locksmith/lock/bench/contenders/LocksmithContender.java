package org.locksmith.lock.bench.contenders;

import java.time.Duration;
import org.locksmith.lock.DistributedLock;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.bench.Contender;
import org.locksmith.lock.bench.Scenario;
import org.locksmith.lock.bench.StoreKind;
import org.locksmith.lock.bench.Stores;

/** A Locksmith backend, opened by URL through {@link Locks#open(String)} exactly as an application would. */
public final class LocksmithContender implements Contender {
    private final String name;
    private final String description;
    private final StoreKind store;
    private final String parameters;

    private LocksmithContender(String name, String description, StoreKind store, String parameters) {
        this.name = name;
        this.description = description;
        this.store = store;
        this.parameters = parameters;
    }

    public static Contender redis() {
        return new LocksmithContender(
                "locksmith-redis", "Locksmith Redis: Lua hash lock, BLPOP wake-ups (defaults)", StoreKind.REDIS, "");
    }

    public static Contender zookeeper() {
        return new LocksmithContender(
                "locksmith-zookeeper",
                "Locksmith ZooKeeper: ephemeral sequential nodes, predecessor watch (30 s session)",
                StoreKind.ZOOKEEPER,
                "");
    }

    public static Contender mysql(String strategy) {
        String what = switch (strategy) {
            case "row" -> "SELECT ... FOR UPDATE in an open transaction, InnoDB wait queue";
            case "lease" -> "lease table, conditional UPDATE, jittered polling";
            case "named" -> "GET_LOCK/RELEASE_LOCK";
            default -> throw new IllegalArgumentException(strategy);
        };
        return new LocksmithContender(
                "locksmith-mysql-" + strategy,
                "Locksmith MySQL " + strategy + ": " + what + " (pool 16)",
                StoreKind.MYSQL,
                "strategy=" + strategy + "&poolSize=16");
    }

    public static Contender postgres() {
        return new LocksmithContender(
                "locksmith-postgres",
                "Locksmith PostgreSQL: session advisory locks, one function call per grant, waiting in the server's"
                        + " lock manager (pool 16)",
                StoreKind.POSTGRES,
                "poolSize=16");
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public StoreKind store() {
        return store;
    }

    @Override
    public boolean ours() {
        return true;
    }

    @Override
    public String notApplicable(Scenario scenario) {
        if (scenario == Scenario.S6
                && (name.endsWith("-row") || name.endsWith("-named") || store == StoreKind.POSTGRES)) {
            return "holds one pooled connection per held lock (that is how a dead client frees its locks), so 10,000"
                    + " held locks would need 10,000 connections";
        }
        return null;
    }

    /** The URL this contender opens for {@code stores}, with a lease of {@code lease} where it has one. */
    public String url(Stores stores, Duration lease) {
        StringBuilder url = new StringBuilder();
        switch (store) {
            case REDIS ->
                url.append(stores.redisUrl())
                        .append(stores.redisUrl().contains("?") ? '&' : '?')
                        .append("prefix=lsbench:")
                        .append(stores.runId())
                        .append(':');
            case ZOOKEEPER ->
                url.append("zookeeper://")
                        .append(stores.zookeeperConnect())
                        .append("/lsbench-")
                        .append(stores.runId())
                        .append('?');
            case MYSQL ->
                url.append(stores.mysqlUrl())
                        .append(stores.mysqlUrl().contains("?") ? '&' : '?')
                        .append("table=lsbench_")
                        .append(stores.runId())
                        .append('_')
                        .append(name.substring(name.lastIndexOf('-') + 1))
                        .append('&')
                        .append(parameters);
            case POSTGRES ->
                url.append(stores.postgresUrl())
                        .append(stores.postgresUrl().contains("?") ? '&' : '?')
                        .append("table=lsbench_")
                        .append(stores.runId())
                        .append("_locksmith&")
                        .append(parameters);
        }
        // ZooKeeper and PostgreSQL have no lease: a lock lives as long as its session.
        if (lease != null && store != StoreKind.ZOOKEEPER && store != StoreKind.POSTGRES) {
            url.append("&leaseMs=").append(lease.toMillis());
        }
        String s = url.toString();
        return s.endsWith("?") ? s.substring(0, s.length() - 1) : s;
    }

    @Override
    public Client open(Stores stores, Duration lease) {
        LockClient client = Locks.open(url(stores, lease));
        return new Client() {
            @Override
            public Handle handle(String key) {
                return new LeaseHandle(client.lock(key));
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }

    /** Keeps the lease of its thread's outermost acquire; re-entrant acquires return the same lease, held once more. */
    private static final class LeaseHandle implements Handle {
        private final DistributedLock lock;
        private LockLease lease;

        LeaseHandle(DistributedLock lock) {
            this.lock = lock;
        }

        @Override
        public void lock() throws InterruptedException {
            lease = lock.acquire(GRANT_TIMEOUT);
        }

        @Override
        public void unlock() {
            lease.release();
        }
    }
}
