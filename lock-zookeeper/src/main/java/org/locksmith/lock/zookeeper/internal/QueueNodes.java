package org.locksmith.lock.zookeeper.internal;

import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * The nodes of the wait queue: creates an attempt's protected ephemeral sequential node (and the key's container
 * parent, and the root, when they are missing), and deletes what an attempt leaves: the node of an attempt that was
 * not granted ({@link #abandon}), of a waiter whose session ended ({@link #discard}), and of a released holder
 * ({@link #release}).
 *
 * <p>Contract: an attempt whose create was sent leaves no node behind once it is over, while ZooKeeper answers: its
 * node is deleted with a guaranteed delete, found by its owner tag if the create's reply never came, or deleted on
 * the create's late reply. The calls are bounded as {@link ZooKeeperCalls} says.
 *
 * <p>Thread-safety: safe for use by any number of threads at once; it keeps no state of its own. A create's reply
 * and the abandon of its attempt meet on the {@link LockNode}'s monitor.
 */
final class QueueNodes {
    private static final System.Logger LOG = System.getLogger("org.locksmith.lock.zookeeper");
    private static final byte[] NO_DATA = new byte[0];

    private final ZooKeeperCalls calls;
    private final CuratorFramework curator;
    private final SessionWatch sessionWatch;
    private final IdleParents idleParents;
    private final String root;

    /**
     * @param calls the backend's calls
     * @param sessionWatch the backend's session watch, told of each released node
     * @param idleParents told of each parent a release left empty
     * @param root the validated lock root, such as {@code /locksmith}
     */
    QueueNodes(ZooKeeperCalls calls, SessionWatch sessionWatch, IdleParents idleParents, String root) {
        this.calls = calls;
        this.curator = calls.curator();
        this.sessionWatch = sessionWatch;
        this.idleParents = idleParents;
        this.root = root;
    }

    void create(LockNode node) throws Exception {
        node.createSent = true;
        // Read before the create is sent: a session that ends after this read is always noticed, even if the
        // create itself went out on the next session (the waiter then deletes and replaces a live node, harmless).
        node.session = sessionWatch.sessionEnds();
        // Protected mode: if the connection drops after the server created the node but before the reply came,
        // Curator's retry finds the node by its protection id instead of creating a second one that would queue
        // behind the first and deadlock us.
        CuratorEvent created = null;
        for (int attempt = 1; created == null; attempt++) {
            try {
                created = calls.call(
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
                stat = calls.call(
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
            calls.deleteInBackground(event.getName());
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
            calls.call(
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
            calls.call(
                    node,
                    reply -> curator.create()
                            .withMode(CreateMode.CONTAINER)
                            .inBackground(reply)
                            .forPath(node.parent, NO_DATA));
        } catch (KeeperException.NodeExistsException e) {
            // another attempt created it meanwhile
        }
    }

    /**
     * Gives up a waiting node whose session ended. The node is normally gone with it; it is deleted anyway, in the
     * background, in case its create was sent just after the session ended and it lives on in the new session,
     * where it would block the queue.
     */
    void discard(LockNode node) {
        String path = node.path;
        node.vanished();
        calls.deleteInBackground(path);
    }

    /**
     * Removes what an attempt that was not granted left behind; never throws, keeps the interrupt status. It waits
     * for the delete's reply at most the connection timeout, so that the node is gone when the attempt returns
     * while ZooKeeper answers, and never longer: Curator goes on deleting in the background (guaranteed delete).
     */
    void abandon(LockNode node) {
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
                calls.call(reply ->
                        curator.delete().guaranteed().inBackground(reply).forPath(path));
            } else if (calls.isConnected()) {
                // No reply to the create yet, or a failed one after the node may have been created (a lost reply
                // and Curator's retries given up): find our node by its owner tag, in the background. A create
                // still to come is deleted by createReplied.
                curator.getChildren()
                        .inBackground((client, event) -> {
                            List<String> children = event.getChildren();
                            for (String child : children == null ? List.<String>of() : children) {
                                if (child.contains(node.tag)) {
                                    calls.deleteInBackground(node.parent + "/" + child);
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

    /**
     * Releases a held node ({@code BackendLease.release()}): deletes it ({@link ZooKeeperCalls#deleteHeld}), which
     * wakes the next waiter, and tells {@link IdleParents} of a parent the node had to itself.
     */
    boolean release(LockNode node) {
        sessionWatch.released(node);
        node.state = LockNode.State.DONE;
        if (!calls.deleteHeld(node.path, node.request.key())) {
            return false;
        }
        if (node.alone) {
            idleParents.released(node.parent);
        }
        return true;
    }
}
