package org.locksmith.lock.zookeeper.internal;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.LockBackend;
import org.locksmith.lock.spi.RenewalReport;

/**
 * The ZooKeeper lock recipe on a Curator client, as the SPI's {@link LockBackend}, and nothing else: it declares the
 * backend's features and timings and delegates to its parts.
 *
 * <ul>
 *   <li>{@link WaitQueue}, the recipe: one container node per key under a persistent root, one protected ephemeral
 *       sequential child per attempt, the lowest sequence holds, each waiter watches only its predecessor; and the
 *       release, which deletes the holder's node.
 *   <li>{@link SessionWatch}: what a suspended, reconnected or lost session means for held leases and waiters, loss
 *       reporting, and the proof that the session is alive ({@link #renew}).
 *   <li>{@link ZooKeeperCalls}: how each ZooKeeper call is bounded in time and how its failure reads.
 * </ul>
 *
 * <p>Round trips: an uncontended acquire is one {@code create2} (returns the node's stat, hence its czxid, the
 * fencing token) and one {@code getChildren} (which also arms the watch that detects the node being deleted behind
 * the holder's back); the release is one {@code delete}. That is what Curator's {@code InterProcessMutex} spends.
 *
 * <p>Connection states: SUSPENDED makes every held lease invalid ({@link LockNode#isSuspended()}) but not lost; on
 * RECONNECTED each hold is valid again once its node is proved alive in this same session, and lost if it is not;
 * LOST (the session ended) makes every held lease lost ({@link SessionWatch}). Safety does not depend on the
 * listener: a lease is never valid past the last proof of its session plus the session timeout ({@link #renew}).
 *
 * <p>Thread-safety: safe for use by any number of threads at once, as the SPI requires.
 */
public final class ZooKeeperLockBackend implements LockBackend {
    private final CuratorFramework curator;
    private final boolean ownsCurator;
    private final String root;
    private final String where;
    /** The session timeout asked for, used until the server has negotiated one. */
    private final long sessionTimeoutHintMs;

    private final long checkIntervalMs;
    private final SessionWatch sessionWatch;
    private final IdleParents idleParents;
    private final WaitQueue queue;

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
        this.sessionTimeoutHintMs = settings.sessionTimeout().toMillis();
        this.checkIntervalMs = Math.max(1, sessionTimeout().toMillis() / 3);
        ZooKeeperCalls calls =
                new ZooKeeperCalls(curator, where, settings.connectionTimeout().toMillis());
        this.sessionWatch = new SessionWatch(calls, root);
        this.idleParents = new IdleParents(curator, sessionWatch::parentsInUse);
        this.queue = new WaitQueue(calls, sessionWatch, idleParents, root);
        sessionWatch.start();
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
     * Proves in one round trip that the session owning the held nodes is alive, for all of them at once ({@link
     * SessionWatch#prove}). A node owned by another session than the one that answered went with its session and
     * is returned as lost. Deletion of a held node is reported by its watch, not here.
     *
     * @throws LockBackendException if ZooKeeper did not answer within the connection timeout or refused
     */
    @Override
    public void renew(List<BackendLease> leases, RenewalReport report) {
        sessionWatch.prove(leases, report);
    }

    /** The Curator client, for tests and tools. */
    public CuratorFramework curator() {
        return curator;
    }

    @Override
    public BackendLease acquire(AcquireRequest request) throws InterruptedException {
        return queue.acquire(request);
    }

    @Override
    public void close() {
        idleParents.close();
        sessionWatch.stop();
        if (ownsCurator) {
            curator.close();
        }
    }

    @Override
    public String toString() {
        return "ZooKeeperLockBackend[" + where + root + "]";
    }
}
