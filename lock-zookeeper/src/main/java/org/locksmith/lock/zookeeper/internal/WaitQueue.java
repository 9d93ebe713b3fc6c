package org.locksmith.lock.zookeeper.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;

/**
 * The wait queue of the ZooKeeper lock recipe: one container node per key under a persistent root, one protected
 * ephemeral sequential child per attempt; the lowest sequence holds, and each waiter watches only its predecessor
 * (through {@link Predecessors}) and is woken when it goes. The release deletes the holder's node, which wakes the
 * next waiter.
 *
 * <p>Contract: an attempt creates its node, reads the key's nodes in arrival order, and either holds (its node is
 * the lowest), or watches its predecessor and waits to be woken, until its deadline or cancellation; a try never
 * waits. Waiters keep their place across a suspension of the connection and look again on RECONNECTED, until their
 * deadline or the end of their session ({@link #awaitReconnection}); a waiter whose node vanished (its session
 * expired) queues again. An attempt that is not granted leaves nothing behind; its node is created and deleted by
 * {@link QueueNodes}, as is a released holder's. What the
 * connection states mean for held nodes is the {@link SessionWatch}'s business; how each call is bounded in time
 * and how its failure reads is the {@link ZooKeeperCalls}'.
 *
 * <p>Thread-safety: safe for use by any number of threads at once; each attempt's state lives in its own {@link
 * LockNode}, used by the acquiring thread and, for its wake-ups and the reply of its create, by ZooKeeper's event
 * thread (guarded as {@code LockNode} says). A held node's callbacks run on any thread.
 */
final class WaitQueue implements LockNode.Owner {
    private static final System.Logger LOG = System.getLogger("org.locksmith.lock.zookeeper");
    private static final BackgroundCallback IGNORE_REPLY = (client, event) -> {};
    /** The mark of a key's parent whose sequence is exhausted (see {@link #checkSequence}). */
    private static final byte[] SEQUENCE_EXHAUSTED = "sequence exhausted".getBytes(StandardCharsets.US_ASCII);

    private final ZooKeeperCalls calls;
    private final CuratorFramework curator;
    private final SessionWatch sessionWatch;
    private final QueueNodes nodes;
    private final String root;
    private final Predecessors predecessors = new Predecessors();

    /**
     * @param calls the backend's calls
     * @param sessionWatch the backend's session watch, which learns of every waiting and held node
     * @param idleParents told of each parent a release left empty
     * @param root the validated lock root, such as {@code /locksmith}
     */
    WaitQueue(ZooKeeperCalls calls, SessionWatch sessionWatch, IdleParents idleParents, String root) {
        this.calls = calls;
        this.curator = calls.curator();
        this.sessionWatch = sessionWatch;
        this.root = root;
        this.nodes = new QueueNodes(calls, sessionWatch, idleParents, root);
    }

    /** The path of the parent node of {@code key}. */
    String lockPath(String key) {
        return root + "/" + LockNodes.encodeKey(key);
    }

    /**
     * Acquires {@code request}'s key (the SPI's {@code acquire}): creates the attempt's node, waits for each
     * predecessor to go, and returns the node once it is the lowest; null if the attempt timed out or was cancelled,
     * leaving nothing of it behind.
     */
    BackendLease acquire(AcquireRequest request) throws InterruptedException {
        String parent = lockPath(request.key());
        LockNode node = new LockNode(this, request, parent);
        boolean granted = false;
        sessionWatch.waiting(node);
        try {
            if (!request.isTry()) {
                request.onCancel(node::wake); // client close: stop waiting at once
            }
            while (true) {
                if (node.path != null && !awaitReconnection(node)) {
                    return null; // its deadline passed, or it was cancelled, while ZooKeeper was unreachable
                }
                if (node.path == null) {
                    calls.awaitConnection(request);
                    nodes.create(node);
                }
                long sentAt = System.nanoTime();
                // Read before the request goes out: the listener counts a suspension before it sweeps the held
                // nodes, so any suspension after this read either finds this node held or changes the count that
                // grant() checks. Read after the reply instead, a suspension whose count landed between the reply
                // and this read, and whose sweep ran before the node was held, went unseen. A suspension counted
                // while the request is out now makes the grant lost even if the reply came after a reconnection:
                // conservative, never unsafe.
                long disconnectionsBefore = sessionWatch.disconnections();
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
        } catch (ZooKeeperCalls.GaveUp e) {
            return null; // cancelled, or its deadline passed, while a call was out
        } catch (InterruptedException e) {
            throw e;
        } catch (LockBackendException e) {
            throw e;
        } catch (Exception e) {
            throw calls.acquireFailed(request.key(), e);
        } finally {
            sessionWatch.stoppedWaiting(node);
            predecessors.forget(node);
            if (!granted) {
                nodes.abandon(node);
            }
            if (node.absorbedInterrupt) {
                Thread.currentThread().interrupt();
            }
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
            if (sessionWatch.sessionEnds() != node.session) {
                nodes.discard(node);
                return true;
            }
            if (calls.isConnected()) {
                return true;
            }
            if (node.request.isTry()) {
                calls.awaitConnection(node.request); // a try never waits on the queue, so it has no place to keep
                continue;
            }
            long sessionNanos = TimeUnit.MILLISECONDS.toNanos(Math.max(
                    calls.connectionTimeoutMs(), curator.getZookeeperClient().getLastNegotiatedSessionTimeoutMs()));
            long left = sessionNanos - (System.nanoTime() - waitedSince);
            if (left <= 0) {
                nodes.discard(node);
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
            event = calls.call(
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
            calls.call(
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
        sessionWatch.held(node, disconnectionsBefore, childChangesBefore);
        return node;
    }

    /** {@link BackendLease#release()} of a held node: {@link QueueNodes#release}. */
    @Override
    public boolean release(LockNode node) {
        return nodes.release(node);
    }

    @Override
    public void lost(LockNode node, String why) {
        sessionWatch.lost(node, why);
    }

    @Override
    public void checkHeldInBackground(LockNode node) {
        sessionWatch.checkHeldInBackground(node);
    }
}
