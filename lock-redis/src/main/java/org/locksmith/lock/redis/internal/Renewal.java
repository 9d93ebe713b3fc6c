package org.locksmith.lock.redis.internal;

import static org.locksmith.lock.redis.internal.RedisFailures.asLong;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.RenewalReport;
import redis.clients.jedis.Connection;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * The renewal rounds: every held lease extended by {@link LockScripts#RENEW} in batches of at most {@value
 * #RENEW_BATCH}, each lease reported renewed, lost or unconfirmed as soon as its batch answered. On one server one
 * group; on a cluster one call per node ({@link #renewPerNode}) or, where a node refuses that, one per slot. A lease
 * the script names as gone is reported lost; a batch that fails (unreachable node, too few replicas) leaves its
 * leases unconfirmed, and the other batches go on.
 *
 * <p>Called by the core from one thread per round; the nodes of a cluster round run in parallel on this class's own
 * threads, which {@link #close()} ends.
 */
final class Renewal {
    private static final System.Logger LOG = System.getLogger("org.locksmith.lock.redis");
    /** How many leases one renewal script call extends at most: bounds the time the script blocks Redis. */
    private static final int RENEW_BATCH = 500;

    private static final String LOST = "no longer held in Redis (renewal refused)";

    private final RedisTopology commands;
    private final ScriptRunner scripts;
    private final RedisSettings settings;
    private final String leaseMillis;
    /** Cluster renewal: one thread per node in a round, idle threads end after 5 s. */
    private final ThreadPoolExecutor renewThreads;
    /** Whether the servers run scripts on keys of many slots of one node; off once neither script compiles. */
    private volatile boolean crossSlotRenewal = true;
    /**
     * The per-node renewal script: {@link LockScripts#RENEW_NODE} (flagged, Redis 7.0+) until a server refuses its
     * flags line, then {@link LockScripts#RENEW_NODE_UNFLAGGED} (before 7.0, which needs no flag).
     */
    private volatile String nodeScript = LockScripts.RENEW_NODE;

    Renewal(RedisTopology commands, ScriptRunner scripts, RedisSettings settings) {
        this.commands = commands;
        this.scripts = scripts;
        this.settings = settings;
        this.leaseMillis = Long.toString(settings.leaseTime().toMillis());
        AtomicInteger renewers = new AtomicInteger();
        this.renewThreads =
                new ThreadPoolExecutor(0, Integer.MAX_VALUE, 5, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
                    Thread t = new Thread(r, "locksmith-redis-renew-" + renewers.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
    }

    /** One round: see {@link org.locksmith.lock.spi.LockBackend#renew}. */
    void renew(List<BackendLease> leases, RenewalReport report) {
        if (commands.isCluster() && crossSlotRenewal) {
            renewPerNode(leases, report);
            return;
        }
        renewPerSlot(leases, report);
    }

    /** One lease on its own ({@link BackendLease#renew()}): false if Redis no longer holds it for its owner. */
    boolean renewOne(RedisLease lease) {
        List<?> missing = (List<?>) scripts.script(
                LockScripts.RENEW,
                LockScripts.RENEW_SHA,
                List.of(lease.keys.hash()),
                List.of(leaseMillis, lease.owner));
        return missing.isEmpty();
    }

    /** Ends the renewal threads. */
    void close() {
        renewThreads.shutdown();
    }

    /**
     * Cluster renewal: the leases grouped by the node that serves their slot, each node's leases renewed by one
     * script call per {@value #RENEW_BATCH} leases ({@link LockScripts#RENEW_NODE}, keys of many slots), the calls of
     * a node pipelined on one connection and the nodes in parallel, so a stalled node delays only its own leases.
     * A batch the node refuses (a slot moved or migrating: MOVED, ASK, TRYAGAIN, CROSSSLOT) falls back to one call
     * per slot, routed by the client. A server without script flags (before Redis 7.0) gets the script without its
     * flags line from then on, which it runs on keys of many slots as 7.0+ runs the flagged one; only if neither
     * compiles does renewal go one slot per call for good.
     */
    private void renewPerNode(List<BackendLease> leases, RenewalReport report) {
        Map<String, List<RedisLease>> byNode = new LinkedHashMap<>();
        Map<String, Integer> slotOfNode = new HashMap<>();
        Map<Integer, String> nodeOfSlot = new HashMap<>();
        List<BackendLease> unrouted = new ArrayList<>();
        for (BackendLease lease : leases) {
            RedisLease l = (RedisLease) lease;
            int slot = l.keys.slot();
            String node = nodeOfSlot.get(slot);
            if (node == null) {
                try (Connection c = commands.connection(slot)) {
                    node = c.getHostAndPort().toString();
                } catch (RuntimeException e) {
                    unrouted.add(l); // the per-slot path reports it
                    continue;
                }
                nodeOfSlot.put(slot, node);
                slotOfNode.putIfAbsent(node, slot);
            }
            byNode.computeIfAbsent(node, n -> new ArrayList<>()).add(l);
        }
        List<Future<?>> running = new ArrayList<>();
        for (Map.Entry<String, List<RedisLease>> e : byNode.entrySet()) {
            int slot = slotOfNode.get(e.getKey());
            Runnable work = () -> renewOnNode(slot, e.getValue(), report);
            try {
                running.add(renewThreads.submit(work));
            } catch (RejectedExecutionException closing) {
                work.run();
            }
        }
        if (!unrouted.isEmpty()) {
            renewPerSlot(unrouted, report);
        }
        awaitAll(running);
    }

    /** Returns once every node's call is done, as the SPI asks, keeping an interrupt for the end. */
    private static void awaitAll(List<Future<?>> running) {
        boolean interrupted = false;
        for (Future<?> f : running) {
            while (true) {
                try {
                    f.get();
                    break;
                } catch (InterruptedException ie) {
                    interrupted = true; // return only once no call is in flight, as the SPI asks
                } catch (ExecutionException ee) {
                    LOG.log(System.Logger.Level.WARNING, "A node's renewal failed: " + ee.getCause(), ee.getCause());
                    break;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** The leases of one node: its batches pipelined on one connection of that node, one reply per batch. */
    private void renewOnNode(int anySlot, List<RedisLease> leases, RenewalReport report) {
        String script = nodeScript;
        List<List<RedisLease>> batches = batches(leases);
        List<RedisLease> refused = new ArrayList<>();
        boolean flagsUnknown = false;
        long sentAt = System.nanoTime();
        List<Object> replies;
        try (Connection c = commands.connection(anySlot)) {
            for (List<RedisLease> batch : batches) {
                c.sendCommand(Protocol.Command.EVAL, nodeArguments(script, batch));
            }
            if (settings.waitReplicas() > 0) {
                replies = scripts.withWait(c, () -> {
                    c.sendCommand(Protocol.Command.WAIT, scripts.waitArguments());
                    return c.getMany(batches.size() + 1);
                });
                long acknowledged = asLong(replies.get(batches.size()));
                if (acknowledged < settings.waitReplicas()) {
                    LockBackendException failure = scripts.tooFewReplicas("a renewal", acknowledged);
                    leases.forEach(l -> report.unconfirmed(l, failure));
                    return;
                }
            } else {
                replies = c.getMany(batches.size());
            }
        } catch (RuntimeException e) {
            LockBackendException failure = scripts.failure("failed", e);
            leases.forEach(l -> report.unconfirmed(l, failure));
            return;
        }
        for (int b = 0; b < batches.size(); b++) {
            List<RedisLease> batch = batches.get(b);
            Object reply = replies.get(b);
            if (reply instanceof JedisDataException refusal) {
                String message = String.valueOf(refusal.getMessage()).toLowerCase(Locale.ROOT);
                if (message.contains("flag") || message.contains("compil") || message.contains("shebang")) {
                    flagsUnknown = true;
                }
                refused.addAll(batch);
                continue;
            }
            reportBatch(batch, (List<?>) reply, sentAt, report);
        }
        if (flagsUnknown && script == LockScripts.RENEW_NODE) {
            // A server before 7.0: it knows no script flags and needs none. Once per backend, then per node.
            nodeScript = LockScripts.RENEW_NODE_UNFLAGGED;
            LOG.log(
                    System.Logger.Level.INFO,
                    "Redis does not know script flags (before 7.0): renewing per node with the script without them");
            renewOnNode(anySlot, refused, report);
            return;
        }
        if (flagsUnknown) {
            crossSlotRenewal = false; // neither script compiles: one slot per call from now on
            LOG.log(
                    System.Logger.Level.INFO,
                    "Redis runs no per-node renewal script: renewing one slot per call from now on");
        }
        if (!refused.isEmpty()) {
            renewPerSlot(new ArrayList<>(refused), report);
        }
    }

    /** {@code EVAL script 1 firstHash leaseMs n hash... owner...} for one batch of one node. */
    private String[] nodeArguments(String script, List<RedisLease> batch) {
        String[] arguments = new String[batch.size() * 2 + 5];
        int i = 0;
        arguments[i++] = script;
        arguments[i++] = "1";
        arguments[i++] = batch.get(0).keys.hash();
        arguments[i++] = leaseMillis;
        arguments[i++] = Integer.toString(batch.size());
        for (RedisLease l : batch) {
            arguments[i++] = l.keys.hash();
        }
        for (RedisLease l : batch) {
            arguments[i++] = l.owner;
        }
        return arguments;
    }

    private void renewPerSlot(List<BackendLease> leases, RenewalReport report) {
        // One script call per slot (and batch), unless the client is known to talk to one server: a script may
        // touch one slot only on a cluster, and a generic UnifiedJedis may hide one. Standalone: one group, -1.
        boolean oneServer = commands.isOneServer();
        Map<Integer, List<RedisLease>> bySlot = new LinkedHashMap<>();
        for (BackendLease lease : leases) {
            RedisLease l = (RedisLease) lease;
            bySlot.computeIfAbsent(oneServer ? -1 : l.keys.slot(), s -> new ArrayList<>())
                    .add(l);
        }
        for (List<RedisLease> group : bySlot.values()) {
            for (List<RedisLease> batch : batches(group)) {
                List<String> keys = new ArrayList<>(batch.size());
                List<String> args = new ArrayList<>(batch.size() + 1);
                args.add(leaseMillis);
                for (RedisLease l : batch) {
                    keys.add(l.keys.hash());
                    args.add(l.owner);
                }
                long sentAt = System.nanoTime();
                List<?> missing;
                try {
                    Object raw = scripts.scriptOn(
                            batch.get(0).keys.slot(), LockScripts.RENEW, LockScripts.RENEW_SHA, keys, args);
                    if (raw instanceof ScriptRunner.Replicated r && r.acknowledged() < settings.waitReplicas()) {
                        throw scripts.tooFewReplicas("a renewal", r.acknowledged());
                    }
                    missing = (List<?>) (raw instanceof ScriptRunner.Replicated r ? r.reply() : raw);
                } catch (LockBackendException e) {
                    // One unreachable node costs only its own leases: the others are renewed and reported.
                    batch.forEach(l -> report.unconfirmed(l, e));
                    continue;
                }
                reportBatch(batch, missing, sentAt, report);
            }
        }
    }

    /** {@code leases} cut into consecutive batches of at most {@value #RENEW_BATCH}. */
    private static List<List<RedisLease>> batches(List<RedisLease> leases) {
        List<List<RedisLease>> batches = new ArrayList<>();
        for (int from = 0; from < leases.size(); from += RENEW_BATCH) {
            batches.add(leases.subList(from, Math.min(leases.size(), from + RENEW_BATCH)));
        }
        return batches;
    }

    /**
     * Reports one answered batch: the leases at the script's 1-based {@code gone} indexes lost, every other one
     * renewed as of {@code sentAt}.
     */
    private static void reportBatch(List<RedisLease> batch, List<?> gone, long sentAt, RenewalReport report) {
        Set<Integer> goneIndexes = new HashSet<>();
        for (Object index : gone) {
            goneIndexes.add((int) asLong(index) - 1);
        }
        for (int i = 0; i < batch.size(); i++) {
            if (goneIndexes.contains(i)) {
                report.lost(batch.get(i), LOST);
            } else {
                report.renewed(batch.get(i), sentAt);
            }
        }
    }
}
