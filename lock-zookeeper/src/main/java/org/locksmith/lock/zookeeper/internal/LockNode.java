package org.locksmith.lock.zookeeper.internal;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;

/**
 * One attempt's ephemeral sequential node: while waiting, woken through the predecessor watcher when its predecessor
 * goes; once granted, the {@link BackendLease} that watches for its own node vanishing behind its back (as the
 * watcher of the parent's children, and then of its own node).
 *
 * <p>The watcher never does blocking I/O (it runs on ZooKeeper's single event thread): a waiter is only signalled,
 * and a holder's check is sent in the background. A node knows the backend's parts only through its {@link Owner}.
 */
final class LockNode implements BackendLease, Watcher {
    /**
     * What a node calls back into: the wait queue that created it implements this, so that a node depends on none
     * of the backend's classes. Each method may be called from any thread, ZooKeeper's event thread included, and
     * must not block it (except {@link #release}, which the core calls).
     */
    interface Owner {
        /** The held node's lease can no longer be proved held: report it lost to the core (once held only). */
        void lost(LockNode node, String why);

        /** A watch of the held node fired: check it in the background and watch it again. */
        void checkHeldInBackground(LockNode node);

        /** {@link BackendLease#release()} of this node. */
        boolean release(LockNode node);
    }

    enum State {
        WAITING,
        HELD,
        DONE
    }

    final AcquireRequest request;
    final String parent;
    final String tag;
    private final Owner owner;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private long signals;

    volatile State state = State.WAITING;
    /** Full path of the node once created; null before, and again after it vanished while waiting. */
    volatile String path;

    volatile String name;
    /** True once a create was sent: an interrupted create may have left a node we must find by {@link #tag}. */
    volatile boolean createSent;
    /**
     * The path a create's reply named, set by the reply's callback unless the attempt was over by then (the callback
     * then deletes the node); guarded by this node's monitor, with {@link #state}'s change to DONE in abandon.
     */
    String replied;
    /** The backend's count of ended sessions when the create was sent: the node lives only while it is unchanged. */
    volatile long session;

    private volatile long czxid;
    /** The session that owns the node (its stat's ephemeralOwner): only that session's proof confirms it. */
    volatile long ephemeralOwner;

    /**
     * Counts the parent's child watch firing (only ZooKeeper's event thread writes it). A grant compares it with
     * its value before the granting {@code getChildren}: a change means that call's watch fired while the node was
     * still waiting, and the holder must arm another.
     */
    volatile long childChanges;

    /** Whether the granting getChildren found no other node: the parent may be idle after the release. */
    volatile boolean alone;

    /** The predecessor this waiting node is registered with in the predecessor watcher; null if none. */
    volatile String watching;

    /** True while the connection is suspended and the node not proved again since ({@link #isSuspended()}). */
    private volatile boolean suspended;

    private volatile long confirmedAtNanos;
    /**
     * Set when an interrupt reached a wait of a request that is not interruptible ({@code Lock.lock()}): the wait
     * went on with this node, keeping its place; the backend sets the interrupt status again when it returns.
     */
    boolean absorbedInterrupt;

    LockNode(Owner owner, AcquireRequest request, String parent) {
        this.owner = owner;
        this.request = request;
        this.parent = parent;
        this.tag = LockNodes.ownerTag(request.ownerId());
    }

    void created(String path, long czxid, long ephemeralOwner) {
        this.path = path;
        this.name = LockNodes.name(path);
        this.czxid = czxid;
        this.ephemeralOwner = ephemeralOwner;
    }

    void vanished() {
        path = null;
        name = null;
        createSent = false;
    }

    void granted(long confirmedAtNanos) {
        this.confirmedAtNanos = confirmedAtNanos;
        this.state = State.HELD;
    }

    long signals() {
        lock.lock();
        try {
            return signals;
        } finally {
            lock.unlock();
        }
    }

    /** Wakes the waiting thread so that it looks again (predecessor gone, reconnected, cancelled). */
    void wake() {
        lock.lock();
        try {
            signals++;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until {@link #wake()} is called after {@code seen} was read, the request is cancelled or its deadline
     * passes.
     *
     * @return true if woken, false if cancelled or out of time
     * @throws InterruptedException if the thread is interrupted while waiting
     */
    boolean await(long seen) throws InterruptedException {
        return await(seen, Long.MAX_VALUE);
    }

    /**
     * As {@link #await(long)}, but also returns after at most {@code maxNanos}.
     *
     * @return true if woken or {@code maxNanos} passed, false if cancelled or the request's deadline passed
     * @throws InterruptedException if the thread is interrupted while waiting and the request is interruptible; an
     *     interrupt of one that is not is noted in {@link #absorbedInterrupt} and the wait goes on
     */
    boolean await(long seen, long maxNanos) throws InterruptedException {
        return awaitUntil(() -> signals != seen, maxNanos);
    }

    /**
     * Waits for the reply of a call this attempt sent, which {@link #replied()} announces: until {@code replied} is
     * true, the request is cancelled, its deadline passes (a try has none here: it waits for its one call), or
     * {@code maxNanos} passed. Interrupts as in {@link #await(long, long)}.
     *
     * @return true if replied or {@code maxNanos} passed, false if cancelled or the request's deadline passed
     */
    boolean awaitReply(BooleanSupplier replied, long maxNanos) throws InterruptedException {
        return awaitUntil(replied, maxNanos);
    }

    /** Wakes the waiting thread to look at a call's reply; not a change of the queue ({@link #signals}). */
    void replied() {
        lock.lock();
        try {
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private boolean awaitUntil(BooleanSupplier done, long maxNanos) throws InterruptedException {
        long start = System.nanoTime();
        lock.lock();
        try {
            while (!done.getAsBoolean()) {
                if (request.isCancelled()) {
                    return false;
                }
                long left = request.isTry() ? Long.MAX_VALUE : request.remainingNanos();
                if (left <= 0) {
                    return false;
                }
                long bound = maxNanos - (System.nanoTime() - start);
                if (bound <= 0) {
                    return true;
                }
                try {
                    changed.awaitNanos(Math.min(left, bound));
                } catch (InterruptedException e) {
                    if (request.isInterruptible()) {
                        throw e;
                    }
                    absorbedInterrupt = true; // Lock.lock(): keep this node's place in the queue
                }
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void process(WatchedEvent event) {
        if (event.getType() == Event.EventType.NodeChildrenChanged) {
            childChanges++; // before reading the state: a grant sets the state, then reads this
        }
        switch (state) {
            case WAITING -> {
                // A waiter registers a child watch on the parent only because the same getChildren call may turn
                // out to grant it the lock; while waiting, only its predecessor's deletion matters (no herd), and
                // that comes through the predecessor watch. Connection events come here too: look again.
                if (event.getType() != Event.EventType.NodeChildrenChanged) {
                    wake();
                }
            }
            case HELD -> {
                String own = path;
                if (event.getType() == Event.EventType.NodeDeleted && own != null && own.equals(event.getPath())) {
                    owner.lost(this, "its node " + own + " was deleted behind its back");
                } else if (event.getType() == Event.EventType.NodeChildrenChanged
                        || event.getType() == Event.EventType.NodeDataChanged) {
                    owner.checkHeldInBackground(this);
                }
            }
            case DONE -> {
                // released or abandoned: a late watch from the wait, nothing to do
            }
        }
    }

    void suspend() {
        suspended = true;
    }

    void resume() {
        suspended = false;
    }

    @Override
    public boolean isSuspended() {
        return suspended;
    }

    @Override
    public long fencingToken() {
        return czxid;
    }

    @Override
    public long confirmedAtNanos() {
        return confirmedAtNanos;
    }

    @Override
    public boolean release() {
        return owner.release(this);
    }

    @Override
    public String toString() {
        return "LockNode[" + (path == null ? parent + "/?" : path) + ", " + state + "]";
    }
}
