package org.locksmith.lock.zookeeper.internal;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.RenewalReport;

/**
 * The session watch: what the state of the Curator client's connection and session means for one backend's held
 * leases and waiters, and the reports of their loss.
 *
 * <p>Contract: SUSPENDED makes every held lease invalid ({@link LockNode#isSuspended()}) but not lost: its session
 * may expire any moment and another client be granted, so it cannot be proved, yet the session and its nodes
 * usually survive a follower restart, a leader election or a network blip. On RECONNECTED each hold is valid again
 * once one {@code exists} shows its node alive in this same session, and lost if it is not; LOST (the session ended)
 * makes every held lease lost. Waiters are woken on LOST and RECONNECTED to look again. A held node deleted behind
 * its holder's back is reported lost from its watch. Safety does not depend on the listener: {@link #prove} proves
 * the session of all held nodes alive in one round trip, and the core never trusts a lease past that proof plus the
 * session timeout. It keeps the registries of held and waiting nodes, and the counts of disconnections and ended
 * sessions that let an acquire notice a suspension or a session end racing with it.
 *
 * <p>Thread-safety: safe for use by any number of threads at once. The listener runs on Curator's connection-state
 * thread, watches and background replies on ZooKeeper's event thread, never blocking either; the registries are
 * concurrent sets and the counts atomic.
 */
final class SessionWatch {
    private static final System.Logger LOG = System.getLogger("org.locksmith.lock.zookeeper");

    private final ZooKeeperCalls calls;
    private final CuratorFramework curator;
    private final String root;

    private final Set<LockNode> held = ConcurrentHashMap.newKeySet();
    private final Set<LockNode> waiting = ConcurrentHashMap.newKeySet();
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
     * @param calls the backend's calls
     * @param root the lock root, which {@link #prove} syncs
     */
    SessionWatch(ZooKeeperCalls calls, String root) {
        this.calls = calls;
        this.curator = calls.curator();
        this.root = root;
    }

    /** Starts listening to the client's connection states. */
    void start() {
        curator.getConnectionStateListenable().addListener(connectionListener);
    }

    /** Stops listening to the client's connection states. */
    void stop() {
        curator.getConnectionStateListenable().removeListener(connectionListener);
    }

    /** The count of SUSPENDED/LOST transitions so far. */
    long disconnections() {
        return disconnections.get();
    }

    /** The count of LOST transitions (ended sessions) so far. */
    long sessionEnds() {
        return sessionEnds.get();
    }

    /** Registers an attempt that may wait, so that a lost session or a reconnection wakes it. */
    void waiting(LockNode node) {
        waiting.add(node);
    }

    /** Unregisters an attempt that is over. */
    void stoppedWaiting(LockNode node) {
        waiting.remove(node);
    }

    /** Unregisters a held node that is being released. */
    void released(LockNode node) {
        held.remove(node);
    }

    /** The parents of the held and waiting nodes, which are never idle. */
    Set<String> parentsInUse() {
        Set<String> parents = new HashSet<>();
        held.forEach(node -> parents.add(node.parent));
        waiting.forEach(node -> parents.add(node.parent));
        return parents;
    }

    /**
     * Proves in one round trip that the session owning the held nodes is alive, for all of them at once: a
     * {@code sync}, not a read, because a follower may still answer reads for a session the leader has already
     * expired, whereas a sync passes through the leader's pipeline after any close of the session. A node owned by
     * another session than the one that answered went with its session and is returned as lost. Deletion of a
     * held node is reported by its watch, not here.
     *
     * @throws org.locksmith.lock.LockBackendException if ZooKeeper did not answer within the connection timeout or
     *     refused
     */
    void prove(List<BackendLease> leases, RenewalReport report) {
        ZooKeeper zk = calls.sessionCheckClient();
        long session = zk.getSessionId();
        long sentAt = System.nanoTime();
        calls.syncSession(zk, root);
        for (BackendLease lease : leases) {
            if (((LockNode) lease).ephemeralOwner != session) {
                report.lost(lease, "its node belongs to an expired ZooKeeper session");
            } else {
                report.renewed(lease, sentAt);
            }
        }
    }

    /**
     * Registers a node just granted. A grant reads the counts before its granting {@code getChildren} is sent (the
     * listener counts a suspension before it sweeps the held nodes, so any suspension after that read either finds
     * this node held or changes the count) and passes them here.
     */
    void held(LockNode node, long disconnectionsBefore, long childChangesBefore) {
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
            if (calls.isConnected()) {
                proveAfterReconnection(node, suspensions);
            }
        }
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

    /** Reports a held node's lease lost to the core; nothing if it is not held (any more). */
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
                            "the ZooKeeper session at " + calls.where() + " ended (expired, or no connection for a"
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
}
