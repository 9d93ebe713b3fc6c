package org.locksmith.lock.zookeeper.internal;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;

/**
 * The one watcher a backend sets on every waiter's predecessor, so that the ZooKeeper client holds at most one
 * watch per watched node, however many attempts watched it and gave up. The client keeps a watcher until its event
 * fires; with a watcher per attempt, each attempt that timed out or was interrupted on a key held for days left
 * its own watcher behind (and its whole attempt with it), and the client's memory grew without bound. A waiter
 * registers here before it sets the watch and leaves when its attempt ends, without I/O.
 *
 * <p>Runs on ZooKeeper's event thread: it only wakes waiters, which look again.
 */
final class Predecessors implements Watcher {
    private final ConcurrentHashMap<String, Set<LockNode>> waiters = new ConcurrentHashMap<>();

    /** Registers {@code node} as waiting for a change of {@code predecessor}; call before setting the watch. */
    void watch(LockNode node, String predecessor) {
        forget(node);
        node.watching = predecessor;
        waiters.compute(predecessor, (path, nodes) -> {
            Set<LockNode> set = nodes == null ? ConcurrentHashMap.newKeySet() : nodes;
            set.add(node);
            return set;
        });
    }

    /** Unregisters {@code node}, if it was registered. */
    void forget(LockNode node) {
        String predecessor = node.watching;
        if (predecessor == null) {
            return;
        }
        node.watching = null;
        waiters.computeIfPresent(predecessor, (path, nodes) -> {
            nodes.remove(node);
            return nodes.isEmpty() ? null : nodes;
        });
    }

    @Override
    public void process(WatchedEvent event) {
        if (event.getType() == Event.EventType.None) {
            waiters.values().forEach(nodes -> nodes.forEach(LockNode::wake)); // connection state: look again
            return;
        }
        // Deleted (or changed, which also ends the watch): wake its waiters, which look again and watch anew.
        Set<LockNode> nodes = waiters.remove(event.getPath());
        if (nodes != null) {
            nodes.forEach(LockNode::wake);
        }
    }
}
