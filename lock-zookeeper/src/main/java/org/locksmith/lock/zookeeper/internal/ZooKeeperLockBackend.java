package org.locksmith.lock.zookeeper.internal;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.LockBackend;
import org.locksmith.lock.spi.RenewalReport;

/**
 * The ZooKeeper lock recipe on a Curator client: one container node per key under a persistent root, one protected
 * ephemeral sequential child per attempt, the lowest sequence holds, each waiter watches only its predecessor.
 *
 * <p>Round trips: an uncontended acquire is one {@code create2} (returns the node's stat, hence its czxid, the
 * fencing token) and one {@code getChildren} (which also arms the watch that detects the node being deleted behind
 * the holder's back); the release is one {@code delete}. That is what Curator's {@code InterProcessMutex} spends.
 *
 * <p>Connection states: SUSPENDED makes every held lease invalid ({@link LockNode#isSuspended()}) but not lost: its
 * session may expire any moment and another client be granted, so it cannot be proved, yet the session and its
 * nodes usually survive a follower restart, a leader election or a network blip. On RECONNECTED each hold is
 * valid again once one {@code exists} shows its node alive in this same session, and lost if it is not; LOST (the
 * session ended) makes every held lease lost. Safety does not depend on the listener: a lease is never valid past
 * the last proof of its session plus the session timeout ({@link #renew}). Waiters keep their place across a
 * suspension and look again on RECONNECTED, until their deadline or the end of their session ({@link
 * #awaitReconnection}); a waiter whose node vanished (session expired) queues again.
 */
public final class ZooKeeperLockBackend implements LockBackend {
    private static final System.Logger LOG = System.getLogger("org.locksmith.lock.zookeeper");
    private static final byte[] NO_DATA = new byte[0];
    private static final BackgroundCallback IGNORE_REPLY = (client, event) -> {};
    /** The mark of a key's parent whose sequence is exhausted (see {@link #checkSequence}). */
    private static final byte[] SEQUENCE_EXHAUSTED = "sequence exhausted".getBytes(StandardCharsets.US_ASCII);

    private final CuratorFramework curator;
    private final boolean ownsCurator;
    private final String root;
    private final String where;
    private final long connectionTimeoutMs;
    /** The session timeout asked for, used until the server has negotiated one. */
    private final long sessionTimeoutHintMs;

    private final long checkIntervalMs;
    private final Set<LockNode> held = ConcurrentHashMap.newKeySet();
    private final Set<LockNode> waiting = ConcurrentHashMap.newKeySet();
    private final Predecessors predecessors = new Predecessors();
    private final IdleParents idleParents;
    /**
     * Counts SUSPENDED/LOST transitions, so that a grant racing with one is suspended and proved again. Incremented before the
     * listener sweeps {@link #held}; a grant reads it before its getChildren is sent and checks it after the node is
     * held.
     */
    private final AtomicLong disconnections = new AtomicLong();
    /** Counts LOST transitions (sessions that ended), so that a waiter knows when its node went with its session. */
    private final AtomicLong sessionEnds = new AtomicLong();

    private final ConnectionStateListener connectionListener = this::connectionChanged;

    /**
     * @param curator a started client
     * @param settings the lock root (validated here), the address for messages, the timeouts, and whether {@link
     *     #close()} closes {@code curator}
     * @throws IllegalStateException if {@code curator} was not started
     * @throws IllegalArgumentException if the root is not a valid ZooKeeper path below {@code /}
     */
    public ZooKeeperLockBackend(CuratorFramework curator, ZooKeeperSettings settings) {
        if (curator.getState() != CuratorFrameworkState.STARTED) {
            throw new IllegalStateException("The CuratorFramework must be started before it is used for locks (state: "
                    + curator.getState() + "); call start() first");
        }
        this.curator = curator;
        this.ownsCurator = settings.ownsClient();
        this.root = LockNodes.validateRoot(settings.root());
        this.where = settings.connectString();
        this.connectionTimeoutMs = settings.connectionTimeout().toMillis();
        this.sessionTimeoutHintMs = settings.sessionTimeout().toMillis();
        this.checkIntervalMs = Math.max(1, sessionTimeout().toMillis() / 3);
        this.idleParents = new IdleParents(curator, this::parentsInUse);
        curator.getConnectionStateListenable().addListener(connectionListener);
    }

    @Override
    public String name() {
        return "zookeeper";
    }

    /**
     * No {@code DURABLE_FENCING}: tokens are zxids, which rise across restarts that keep the data but start again
     * when the data is lost (see the README, "Fencing token").
     */
    @Override
    public Set<LockFeature> features() {
        return EnumSet.of(
                LockFeature.REENTRANT,
                LockFeature.FAIR,
                LockFeature.FENCING,
                LockFeature.SESSION_BOUND,
                LockFeature.BLOCKING_WAKEUP,
                LockFeature.LOSS_DETECTION);
    }

    /** Leases do not expire on a timer: they live as long as the session (and the connection) does. */
    @Override
    public Duration leaseTime() {
        return Duration.ZERO;
    }

    /**
     * A third of the session timeout known when this backend was built: how often {@link #renew} proves the
     * session alive, so that a lease stays valid while its session provably is.
     */
    @Override
    public Duration renewInterval() {
        return Duration.ofMillis(checkIntervalMs);
    }

    /**
     * The session timeout the server negotiated (the server bounds the requested one to 2..20 ticks): the server
     * expires a session it has not heard from for this long, and its ephemeral nodes with it.
     */
    @Override
    public Duration sessionTimeout() {
        int negotiated = curator.getZookeeperClient().getLastNegotiatedSessionTimeoutMs();
        return Duration.ofMillis(negotiated > 0 ? negotiated : sessionTimeoutHintMs);
    }

    /**
     * Proves in one round trip that the session owning the held nodes is alive, for all of them at once: a
     * {@code sync}, not a read, because a follower may still answer reads for a session the leader has already
     * expired, whereas a sync passes through the leader's pipeline after any close of the session. A node owned by
     * another session than the one that answered went with its session and is returned as lost. Deletion of a
     * held node is reported by its watch, not here.
     *
     * @throws LockBackendException if ZooKeeper did not answer within the connection timeout or refused
     */
    @Override
    public void renew(List<BackendLease> leases, RenewalReport report) {
        ZooKeeper zk;
        try {
            zk = curator.getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            throw new LockBackendException("No ZooKeeper connection to " + where + " to prove the session alive", e);
        }
        long session = zk.getSessionId();
        long sentAt = System.nanoTime();
        CompletableFuture<Integer> answered = new CompletableFuture<>();
        zk.sync(root, (rc, path, ctx) -> answered.complete(rc), null);
        int rc;
        try {
            rc = answered.get(connectionTimeoutMs, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new LockBackendException("ZooKeeper at " + where + " did not answer a session check within "
                    + ZooKeeperSettings.CONNECTION_TIMEOUT + "=" + connectionTimeoutMs);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("Interrupted while checking the ZooKeeper session at " + where, e);
        } catch (ExecutionException e) {
            throw new LockBackendException("Session check at " + where + " failed", e.getCause());
        }
        if (rc != KeeperException.Code.OK.intValue()) {
            throw new LockBackendException(
                    "ZooKeeper at " + where + " did not prove the session alive",
                    KeeperException.create(KeeperException.Code.get(rc)));
        }
        for (BackendLease lease : leases) {
            if (((LockNode) lease).ephemeralOwner != session) {
                report.lost(lease, "its node belongs to an expired ZooKeeper session");
            } else {
                report.renewed(lease, sentAt);
            }
        }
    }

    /** The Curator client, for tests and tools. */
    public CuratorFramework curator() {
        return curator;
    }

    /** The path of the parent node of {@code key}. */
    public String lockPath(String key) {
        return root + "/" + LockNodes.encodeKey(key);
    }

    @Override
    public BackendLease acquire(AcquireRequest request) throws InterruptedException {
        String parent = lockPath(request.key());
        LockNode node = new LockNode(this, request, parent);
        boolean granted = false;
        waiting.add(node);
        try {
            if (!request.isTry()) {
                request.onCancel(node::wake); // client close: stop waiting at once
            }
            while (true) {
                if (node.path != null && !awaitReconnection(node)) {
                    return null; // its deadline passed, or it was cancelled, while ZooKeeper was unreachable
                }
                if (node.path == null) {
                    awaitConnection(request);
                    create(node);
                }
                long sentAt = System.nanoTime();
                // Read before the request goes out: the listener counts a suspension before it sweeps the held
                // nodes, so any suspension after this read either finds this node held or changes the count that
                // grant() checks. Read after the reply instead, a suspension whose count landed between the reply
                // and this read, and whose sweep ran before the node was held, went unseen. A suspension counted
                // while the request is out now makes the grant lost even if the reply came after a reconnection:
                // conservative, never unsafe.
                long disconnectionsBefore = disconnections.get();
                long childChangesBefore = node.childChanges;
                Children children;
                try {
                    children = sortedChildren(node);
                } catch (KeeperException.ConnectionLossException | KeeperException.SessionExpiredException e) {
                    if (!keepsPlace(node)) {
                        throw e;
                    }
                    if (request.isCancelled()) {
                        return null; // the deadline passed while the call was out: a timeout, as for any waiter
                    }
                    continue; // the connection dropped midway: wait for it with our node, at the top
                }
                int index = children.names.indexOf(node.name);
                if (index >= 0) {
                    checkSequence(node, children.parent);
                }
                if (index < 0) {
                    // Our node is gone: the session expired while we waited, or someone deleted it. Queue again.
                    node.vanished();
                    if (request.isTry() || request.isCancelled()) {
                        return null;
                    }
                    continue;
                }
                if (index == 0) {
                    node.alone = children.names.size() == 1;
                    granted = true;
                    return grant(node, sentAt, disconnectionsBefore, childChangesBefore);
                }
                if (request.isTry() || request.isCancelled()) {
                    return null;
                }
                long seen = node.signals();
                boolean predecessorExists;
                try {
                    predecessorExists = predecessorExists(parent + "/" + children.names.get(index - 1), node);
                } catch (KeeperException.ConnectionLossException | KeeperException.SessionExpiredException e) {
                    if (!keepsPlace(node)) {
                        throw e;
                    }
                    if (request.isCancelled()) {
                        return null;
                    }
                    continue;
                }
                if (predecessorExists && !node.await(seen)) {
                    return null;
                }
                if (request.isCancelled()) {
                    return null;
                }
            }
        } catch (GaveUp e) {
            return null; // cancelled, or its deadline passed, while a call was out
        } catch (InterruptedException e) {
            throw e;
        } catch (LockBackendException e) {
            throw e;
        } catch (NoReply e) {
            throw new LockBackendException(
                    "ZooKeeper at " + where + " failed while acquiring key '" + request.key() + "': " + e.getMessage(),
                    e);
        } catch (Exception e) {
            throw new LockBackendException(
                    "ZooKeeper at " + where + " failed while acquiring key '" + request.key() + "': " + e, e);
        } finally {
            waiting.remove(node);
            predecessors.forget(node);
            if (!granted) {
                abandon(node);
            }
            if (node.absorbedInterrupt) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Fails fast while ZooKeeper is unreachable: an attempt without a node waits for a connection at most the
     * connection timeout, and never past its deadline, so that it never queues behind Curator's retries for longer.
     */
    private void awaitConnection(AcquireRequest request) throws InterruptedException {
        if (isConnected()) {
            return;
        }
        long waitMs = connectionTimeoutMs;
        String bound = ZooKeeperSettings.CONNECTION_TIMEOUT + "=" + connectionTimeoutMs;
        if (!request.isTry() && request.remainingNanos() < TimeUnit.MILLISECONDS.toNanos(waitMs)) {
            waitMs = Math.max(0, TimeUnit.NANOSECONDS.toMillis(request.remainingNanos()));
            bound = "the acquire's deadline";
        }
        if (waitMs == 0 || !curator.blockUntilConnected((int) waitMs, TimeUnit.MILLISECONDS)) {
            throw new LockBackendException(
                    "Not connected to ZooKeeper at " + where + " within " + bound + " (key '" + request.key()
                            + "'); check that the ensemble is running and reachable",
                    new KeeperException.ConnectionLossException());
        }
    }

    /**
     * A waiter that finds the connection down keeps its node, and so its place in the queue, for as long as its
     * session may survive: it waits for the reconnection until its own deadline or until its session ends,
     * whichever comes first. Failing it after the connection timeout instead, as a new attempt fails, would send
     * every waiter to the back of the queue after any outage longer than that, although ZooKeeper keeps their nodes
     * for the whole session timeout. The session ends when Curator reports LOST, which it does once a session
     * timeout has passed without a connection; as a backstop that does not depend on Curator's policy, the waiter
     * also stops trusting its node after one negotiated session timeout of its own wait.
     *
     * @return true to look again: connected in the node's session, or the session ended and the node was given up
     *     (its path is then null and the caller queues again, as a new attempt); false if the request's deadline
     *     passed or it was cancelled first
     */
    private boolean awaitReconnection(LockNode node) throws InterruptedException {
        long waitedSince = System.nanoTime();
        while (true) {
            long seen = node.signals();
            if (sessionEnds.get() != node.session) {
                discard(node);
                return true;
            }
            if (isConnected()) {
                return true;
            }
            if (node.request.isTry()) {
                awaitConnection(node.request); // a try never waits on the queue, so it has no place to keep
                continue;
            }
            long sessionNanos = TimeUnit.MILLISECONDS.toNanos(
                    Math.max(connectionTimeoutMs, curator.getZookeeperClient().getLastNegotiatedSessionTimeoutMs()));
            long left = sessionNanos - (System.nanoTime() - waitedSince);
            if (left <= 0) {
                discard(node);
                return true;
            }
            if (!node.await(seen, left)) {
                return false;
            }
        }
    }

    /**
     * Whether a waiter whose call failed for want of a connection keeps its node and waits for the reconnection. A
     * synchronous call sent just as the connection drops can block for up to the ZooKeeper client's reconnection
     * back-off (about a second) before it fails, so the caller checks the deadline again before it waits.
     */
    private static boolean keepsPlace(LockNode node) {
        return node.path != null && !node.request.isTry();
    }

    /**
     * Gives up a waiting node whose session ended. The node is normally gone with it; it is deleted anyway, in the
     * background, in case its create was sent just after the session ended and it lives on in the new session,
     * where it would block the queue.
     */
    private void discard(LockNode node) {
        String path = node.path;
        node.vanished();
        deleteInBackground(path);
    }

    private boolean isConnected() {
        return curator.getZookeeperClient().isConnected();
    }

    private void create(LockNode node) throws Exception {
        node.createSent = true;
        // Read before the create is sent: a session that ends after this read is always noticed, even if the
        // create itself went out on the next session (the waiter then deletes and replaces a live node, harmless).
        node.session = sessionEnds.get();
        // Protected mode: if the connection drops after the server created the node but before the reply came,
        // Curator's retry finds the node by its protection id instead of creating a second one that would queue
        // behind the first and deadlock us.
        CuratorEvent created = null;
        for (int attempt = 1; created == null; attempt++) {
            try {
                created = call(
                        node,
                        reply -> curator.create()
                                .withProtection()
                                .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                                .inBackground((client, event) -> {
                                    createReplied(node, event);
                                    reply.processResult(client, event);
                                })
                                .forPath(node.parent + "/" + node.tag, NO_DATA));
            } catch (KeeperException.NoNodeException e) {
                // The reaper, or another client's IdleParents, may delete an emptied parent between its creation
                // and ours; a fifth miss takes the key being emptied and deleted four times meanwhile.
                if (attempt == 5) {
                    throw e;
                }
                createParent(node);
            }
        }
        String path = created.getName();
        Stat stat = created.getStat();
        if (stat == null || stat.getCzxid() == 0) {
            // The node was found by protected mode after a lost reply: the stat was not filled in; ask for it.
            try {
                stat = call(
                                node,
                                reply -> curator.checkExists()
                                        .inBackground(reply)
                                        .forPath(path))
                        .getStat();
            } catch (KeeperException.NoNodeException e) {
                stat = null;
            }
            if (stat == null) {
                node.created(path, 0, 0);
                node.vanished();
                return; // expired in between; the caller's getChildren will not find it and queue again
            }
        }
        node.created(path, stat.getCzxid(), stat.getEphemeralOwner());
    }

    /**
     * A create's reply, on Curator's thread: if the attempt is already over (it gave up while the create was out,
     * or Curator retried it after that), nobody will use the node, so delete it; else note its path for abandon.
     */
    private void createReplied(LockNode node, CuratorEvent event) {
        if (event.getResultCode() != KeeperException.Code.OK.intValue()) {
            return;
        }
        boolean over;
        synchronized (node) {
            over = node.state == LockNode.State.DONE;
            if (!over) {
                node.replied = event.getName();
            }
        }
        if (over) {
            deleteInBackground(event.getName());
        }
    }

    /**
     * Creates the parent of a key's nodes as a container, which the server deletes once it is empty again, under a
     * root created once as a persistent node, with any missing ancestors. The root and its ancestors may be shared
     * with the application ({@code /app} for {@code /app/locks}): Curator's creatingParentContainersIfNeeded() made
     * them containers too, which the server deleted as soon as the last lock under them was gone. Costs nothing on
     * the hot path: it runs only when the create found no parent.
     */
    private void createParent(LockNode node) throws Exception {
        try {
            createContainer(node);
            return;
        } catch (KeeperException.NoNodeException e) {
            // no root yet
        }
        try {
            call(
                    node,
                    reply -> curator.create()
                            .creatingParentsIfNeeded()
                            .inBackground(reply)
                            .forPath(root, NO_DATA));
        } catch (KeeperException.NodeExistsException e) {
            // another client created it meanwhile
        }
        createContainer(node);
    }

    /** Creates the container parent of {@code node}; one that exists already (another attempt made it) is fine. */
    private void createContainer(LockNode node) throws Exception {
        try {
            call(
                    node,
                    reply -> curator.create()
                            .withMode(CreateMode.CONTAINER)
                            .inBackground(reply)
                            .forPath(node.parent, NO_DATA));
        } catch (KeeperException.NodeExistsException e) {
            // another attempt created it meanwhile
        }
    }

    /** A key's nodes in arrival order, and the stat of their parent (null if there is none). */
    private record Children(List<String> names, Stat parent) {}

    /**
     * The key's nodes in arrival order, and the parent's stat (same round trip), whose data tells whether the key's
     * sequence is exhausted ({@link #checkSequence}).
     */
    private Children sortedChildren(LockNode node) throws Exception {
        if (node.path == null) {
            return new Children(List.of(), null);
        }
        // The watch matters only if this call grants the lock: it then tells the holder that a child changed,
        // which is how a holder learns that its own node was deleted behind its back, at no extra round trip.
        CuratorEvent event;
        try {
            event = call(
                    node,
                    reply -> curator.getChildren()
                            .usingWatcher(node)
                            .inBackground(reply)
                            .forPath(node.parent));
        } catch (KeeperException.NoNodeException e) {
            // an operator deleted the whole lock, our node with it: the caller queues again
            return new Children(List.of(), null);
        }
        List<String> children = new ArrayList<>(event.getChildren());
        children.removeIf(child -> LockNodes.sequence(child) < 0);
        children.sort(LockNodes.BY_SEQUENCE);
        return new Children(children, event.getStat());
    }

    /**
     * Fails an attempt before ZooKeeper's sequence counter of the key's parent reaches its end, where the order of
     * nodes is lost ({@link LockNodes#SEQUENCE_LIMIT}). The first attempt numbered past the limit marks the parent
     * with data; every later attempt reads the mark, and its time (the parent's mzxid), in the stat of its
     * {@code getChildren} for free, and fails if its node is younger than the mark. Nodes created before the mark
     * go on: they are numbered below the limit and in order, and the younger nodes, which may sort before them,
     * never hold. The mark goes with the parent once the key is free.
     */
    private void checkSequence(LockNode node, Stat parentStat) {
        if (parentStat == null) {
            return; // the parent went meanwhile: the caller does not find its node and queues again
        }
        long sequence = LockNodes.sequence(node.name);
        // Our parents are created empty; a foreign parent's data of just this length fails attempts, loudly, safely.
        boolean marked = parentStat.getDataLength() == SEQUENCE_EXHAUSTED.length;
        if (sequence < LockNodes.SEQUENCE_LIMIT && !(marked && node.fencingToken() > parentStat.getMzxid())) {
            return;
        }
        if (!marked) {
            try {
                // in the background: this client's later calls come after it (one session's calls are ordered)
                curator.setData().inBackground(IGNORE_REPLY).forPath(node.parent, SEQUENCE_EXHAUSTED);
            } catch (Exception e) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "Could not mark " + node.parent + " as out of sequence numbers; later attempts do it: " + e);
            }
        }
        throw new LockBackendException("Key '" + node.request.key() + "': the sequence counter of its ZooKeeper node "
                + node.parent + " is near its end (2^31 - 1; this attempt's node is numbered " + sequence + "),"
                + " where ZooKeeper numbers new nodes out of order. Attempts on this key fail until every holder and"
                + " waiter has let go and " + node.parent + " is deleted (the container reaper or the last release"
                + " deletes it, or delete it by hand once it has no children); its counter then starts again at 0");
    }

    private boolean predecessorExists(String predecessor, LockNode node) throws Exception {
        predecessors.watch(node, predecessor); // before the watch is set: its event may come before the reply
        try {
            // getData, not exists: a watch is left only on a node that exists, never on one that is already gone.
            call(
                    node,
                    reply -> curator.getData()
                            .usingWatcher(predecessors)
                            .inBackground(reply)
                            .forPath(predecessor));
            return true;
        } catch (KeeperException.NoNodeException e) {
            predecessors.forget(node);
            return false;
        }
    }

    private LockNode grant(LockNode node, long sentAt, long disconnectionsBefore, long childChangesBefore) {
        node.granted(sentAt);
        held.add(node);
        if (node.childChanges != childChangesBefore) {
            // The child watch armed by the granting getChildren fired before the node was held, and was ignored as
            // a waiter's: it was the holder's only way to learn that its node is deleted behind its back. Arm one.
            checkHeldInBackground(node);
        }
        long suspensions = disconnections.get();
        if (suspensions != disconnectionsBefore) {
            // The connection was suspended while the grant was in flight, and the listener may have missed this
            // node: suspend it and prove it now if connected again (a later RECONNECTED finds it held).
            node.suspend();
            if (isConnected()) {
                proveAfterReconnection(node, suspensions);
            }
        }
        return node;
    }

    /**
     * Removes what an attempt that was not granted left behind; never throws, keeps the interrupt status. It waits
     * for the delete's reply at most the connection timeout, so that the node is gone when the attempt returns
     * while ZooKeeper answers, and never longer: Curator goes on deleting in the background (guaranteed delete).
     */
    private void abandon(LockNode node) {
        String path;
        synchronized (node) { // with createReplied: a create whose reply comes later is deleted there
            node.state = LockNode.State.DONE;
            path = node.path != null ? node.path : node.replied;
        }
        if (!node.createSent) {
            return;
        }
        boolean interrupted = Thread.interrupted();
        try {
            if (path != null) {
                call(reply -> curator.delete().guaranteed().inBackground(reply).forPath(path));
            } else if (isConnected()) {
                // No reply to the create yet, or a failed one after the node may have been created (a lost reply
                // and Curator's retries given up): find our node by its owner tag, in the background. A create
                // still to come is deleted by createReplied.
                curator.getChildren()
                        .inBackground((client, event) -> {
                            List<String> children = event.getChildren();
                            for (String child : children == null ? List.<String>of() : children) {
                                if (child.contains(node.tag)) {
                                    deleteInBackground(node.parent + "/" + child);
                                }
                            }
                        })
                        .forPath(node.parent);
            }
        } catch (KeeperException.NoNodeException e) {
            // nothing left behind
        } catch (Exception e) {
            LOG.log(
                    System.Logger.Level.DEBUG,
                    "The delete of the abandoned lock node of key '" + node.request.key() + "' is not confirmed;"
                            + " Curator retries it in the background and it vanishes with the session anyway: " + e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** A guaranteed delete that never waits: Curator sends it now or on reconnection, and retries until it is done. */
    private void deleteInBackground(String path) {
        try {
            curator.delete().guaranteed().inBackground().forPath(path);
        } catch (Exception e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "Could not schedule the delete of lock node " + path + "; it vanishes with its session: " + e);
        }
    }

    /**
     * Deletes the node with a guaranteed delete: Curator goes on sending it, when the connection returns if it must,
     * until it succeeds, while this waits for its reply at most the connection timeout, whatever the Curator
     * client's retry policy. Without the guarantee a node whose delete was never sent would outlive the outage for
     * as long as the session does, which with an application's long-lived Curator client is for good.
     */
    boolean release(LockNode node) {
        held.remove(node);
        node.state = LockNode.State.DONE;
        boolean interrupted = Thread.interrupted();
        try {
            // Wait for the connection first: a delete sent while it is down fails at once, and one sent into a new
            // session (the old one expired) must find the node gone, which makes the lease lost, not unreleased.
            if (!isConnected() && !curator.blockUntilConnected((int) connectionTimeoutMs, TimeUnit.MILLISECONDS)) {
                deleteInBackground(node.path);
                throw new LockBackendException("Not connected to ZooKeeper at " + where + " within "
                        + ZooKeeperSettings.CONNECTION_TIMEOUT + "=" + connectionTimeoutMs + ": key '"
                        + node.request.key() + "' is not released yet" + scheduled(node));
            }
            call(reply -> curator.delete().guaranteed().inBackground(reply).forPath(node.path));
            if (node.alone) {
                idleParents.released(node.parent);
            }
            return true;
        } catch (KeeperException.NoNodeException e) {
            return false;
        } catch (LockBackendException e) {
            throw e;
        } catch (NoReply e) {
            throw new LockBackendException(
                    "ZooKeeper at " + where + " did not confirm the release of key '" + node.request.key() + "': "
                            + e.getMessage() + "; it is not released yet" + scheduled(node),
                    e);
        } catch (InterruptedException e) {
            interrupted = true;
            throw new LockBackendException(
                    "Interrupted while releasing key '" + node.request.key() + "' at " + where
                            + "; it is not released yet" + scheduled(node),
                    e);
        } catch (Exception e) {
            throw new LockBackendException(
                    "ZooKeeper at " + where + " failed while releasing key '" + node.request.key() + "': " + e
                            // the same test Curator makes before it schedules a failed guaranteed delete again
                            + (curator.getZookeeperClient().getRetryPolicy().allowRetry(e) ? scheduled(node) : ""),
                    e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static String scheduled(LockNode node) {
        return "; the delete of its node " + node.path + " stays scheduled: Curator sends it when the connection"
                + " returns, while the client is open, and the node goes with the session otherwise";
    }

    /** A ZooKeeper call sent in the background: {@code reply} receives its reply. */
    private interface Call {
        void send(BackgroundCallback reply) throws Exception;
    }

    /** The attempt was cancelled, or its deadline passed, while it waited for a reply. */
    private static final class GaveUp extends Exception {
        private static final long serialVersionUID = 1L;

        GaveUp() {
            super(null, null, false, false);
        }
    }

    /** No reply within the connection timeout: to the recipe, a lost connection; the call may still complete. */
    private static final class NoReply extends KeeperException.ConnectionLossException {
        private static final long serialVersionUID = 1L;
        private final String message;

        NoReply(String message) {
            this.message = message;
        }

        @Override
        public String getMessage() {
            return message;
        }
    }

    private NoReply noReply() {
        return new NoReply("no reply within " + ZooKeeperSettings.CONNECTION_TIMEOUT + "=" + connectionTimeoutMs
                + " (the ensemble is stalled or unreachable)");
    }

    /**
     * Sends a call of an attempt and waits for its reply at most the connection timeout, and never past the
     * attempt's deadline or cancellation, whatever the Curator client's retry policy (an application's client may
     * retry a call for minutes, and a stalled server is noticed only after two thirds of the session timeout). A
     * reply that comes later is dropped; a late create's node is deleted ({@link #createReplied}).
     *
     * @throws GaveUp if the attempt was cancelled or its deadline passed first
     * @throws NoReply if no reply came within the connection timeout
     * @throws KeeperException the reply's error
     * @throws InterruptedException as {@link LockNode#awaitReply} says
     */
    private CuratorEvent call(LockNode node, Call call) throws Exception {
        AtomicReference<CuratorEvent> reply = new AtomicReference<>();
        call.send((client, event) -> {
            reply.set(event);
            node.replied();
        });
        if (!node.awaitReply(() -> reply.get() != null, TimeUnit.MILLISECONDS.toNanos(connectionTimeoutMs))) {
            throw new GaveUp();
        }
        CuratorEvent event = reply.get();
        if (event == null) {
            throw noReply();
        }
        return succeeded(event);
    }

    /** As {@link #call(LockNode, Call)} for a call of no attempt (a release): bounded by the connection timeout. */
    private CuratorEvent call(Call call) throws Exception {
        CompletableFuture<CuratorEvent> reply = new CompletableFuture<>();
        call.send((client, event) -> reply.complete(event));
        try {
            return succeeded(reply.get(connectionTimeoutMs, TimeUnit.MILLISECONDS));
        } catch (TimeoutException e) {
            throw noReply();
        }
    }

    private static CuratorEvent succeeded(CuratorEvent event) throws KeeperException {
        int rc = event.getResultCode();
        if (rc != KeeperException.Code.OK.intValue()) {
            throw KeeperException.create(KeeperException.Code.get(rc), event.getPath());
        }
        return event;
    }

    /** A holder's watch fired: check in the background (never block ZooKeeper's event thread) and watch again. */
    void checkHeldInBackground(LockNode node) {
        String path = node.path;
        if (path == null || node.state != LockNode.State.HELD) {
            return;
        }
        try {
            curator.checkExists()
                    .usingWatcher(node)
                    .inBackground((client, event) -> checked(node, event))
                    .forPath(path);
        } catch (Exception e) {
            LOG.log(System.Logger.Level.WARNING, "Could not check lock node " + path + ": " + e);
        }
    }

    private void checked(LockNode node, CuratorEvent event) {
        int rc = event.getResultCode();
        if (rc == KeeperException.Code.NONODE.intValue()) {
            lost(node, "its node " + node.path + " was deleted behind its back");
        }
        // Any other failure is a connection problem, which the connection listener reports.
    }

    void lost(LockNode node, String why) {
        if (node.state != LockNode.State.HELD) {
            return;
        }
        node.request.reportLost(why, null);
    }

    private void connectionChanged(CuratorFramework client, ConnectionState state) {
        switch (state) {
            case SUSPENDED -> {
                disconnections.incrementAndGet();
                // The session may expire any moment and another client be granted: the leases cannot be proved,
                // so they are invalid, but not lost: the session and the nodes may well survive (a follower
                // restart, a leader election, a network blip). RECONNECTED proves them again.
                held.forEach(LockNode::suspend);
            }
            case LOST -> {
                disconnections.incrementAndGet();
                sessionEnds.incrementAndGet(); // before the waiters are woken below
                for (LockNode node : held) {
                    lost(
                            node,
                            "the ZooKeeper session at " + where + " ended (expired, or no connection for a"
                                    + " session timeout): its node is gone");
                }
                waiting.forEach(LockNode::wake);
            }
            case RECONNECTED -> {
                long suspensions = disconnections.get();
                held.forEach(node -> proveAfterReconnection(node, suspensions));
                waiting.forEach(LockNode::wake);
            }
            default -> {
                // CONNECTED (first connection) and READ_ONLY (never requested) need nothing
            }
        }
    }

    /**
     * After a reconnection, a suspended hold is valid again once its node is proved to exist in this very session
     * (one background {@code exists}, which also watches the node again); a node that is gone, or that belongs to
     * another session, is lost. If the connection drops again before the answer, the next reconnection decides;
     * if none comes in time, the lease's validity runs out and the core reports it lost.
     */
    private void proveAfterReconnection(LockNode node, long suspensions) {
        String path = node.path;
        if (path == null || node.state != LockNode.State.HELD) {
            return;
        }
        try {
            long session = curator.getZookeeperClient().getZooKeeper().getSessionId();
            curator.checkExists()
                    .usingWatcher(node)
                    .inBackground((client, event) -> {
                        int rc = event.getResultCode();
                        Stat stat = event.getStat();
                        if (rc == KeeperException.Code.NONODE.intValue()) {
                            lost(node, "its node " + path + " was deleted while the connection was down");
                        } else if (rc == KeeperException.Code.OK.intValue()
                                && (stat.getEphemeralOwner() != node.ephemeralOwner
                                        || node.ephemeralOwner != session)) {
                            lost(node, "its node " + path + " belongs to another ZooKeeper session than this one");
                        } else if (rc == KeeperException.Code.OK.intValue() && disconnections.get() == suspensions) {
                            node.resume();
                        }
                    })
                    .forPath(path);
        } catch (Exception e) {
            LOG.log(System.Logger.Level.WARNING, "Could not check lock node " + path + " after reconnecting: " + e);
        }
    }

    private Set<String> parentsInUse() {
        Set<String> parents = new HashSet<>();
        held.forEach(node -> parents.add(node.parent));
        waiting.forEach(node -> parents.add(node.parent));
        return parents;
    }

    @Override
    public void close() {
        idleParents.close();
        curator.getConnectionStateListenable().removeListener(connectionListener);
        if (ownsCurator) {
            curator.close();
        }
    }

    @Override
    public String toString() {
        return "ZooKeeperLockBackend[" + where + root + "]";
    }
}
