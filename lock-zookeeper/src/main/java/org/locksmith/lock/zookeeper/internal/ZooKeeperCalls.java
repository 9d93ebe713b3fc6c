package org.locksmith.lock.zookeeper.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.spi.AcquireRequest;

/**
 * The calls: how one backend sends ZooKeeper operations through its Curator client, bounds each in time, and maps
 * their failures to {@link LockBackendException}s that name the ensemble.
 *
 * <p>Contract: every call waits for a connection at most the connection timeout, and for its reply at most the
 * connection timeout, whatever the Curator client's retry policy (which Curator applies to the call in the
 * background); a call of an acquire never waits past its attempt's deadline or cancellation either ({@link
 * #call(LockNode, Call)}). Which calls the recipe sends, and in what order, is decided by its callers.
 *
 * <p>Thread-safety: immutable after construction and safe for use by any number of threads at once (Curator's
 * client is). Replies are delivered on Curator's event thread, which the callbacks here never block.
 */
final class ZooKeeperCalls {
    private static final System.Logger LOG = System.getLogger("org.locksmith.lock.zookeeper");

    private final CuratorFramework curator;
    private final String where;
    private final long connectionTimeoutMs;

    /**
     * @param curator a started client
     * @param where the address, for messages
     * @param connectionTimeoutMs how long an operation waits for a connection, and for a reply, before it fails
     */
    ZooKeeperCalls(CuratorFramework curator, String where, long connectionTimeoutMs) {
        this.curator = curator;
        this.where = where;
        this.connectionTimeoutMs = connectionTimeoutMs;
    }

    /** The Curator client the calls go through. */
    CuratorFramework curator() {
        return curator;
    }

    /** The address of the ensemble, for messages. */
    String where() {
        return where;
    }

    /** How long an operation waits for a connection, and for a reply, before it fails. */
    long connectionTimeoutMs() {
        return connectionTimeoutMs;
    }

    boolean isConnected() {
        return curator.getZookeeperClient().isConnected();
    }

    /**
     * Fails fast while ZooKeeper is unreachable: an attempt without a node waits for a connection at most the
     * connection timeout, and never past its deadline, so that it never queues behind Curator's retries for longer.
     */
    void awaitConnection(AcquireRequest request) throws InterruptedException {
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
     * The ZooKeeper handle of the current connection, whose session id tells which session a session check proves.
     *
     * @throws LockBackendException if there is no connection
     */
    ZooKeeper sessionCheckClient() {
        try {
            return curator.getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            throw new LockBackendException("No ZooKeeper connection to " + where + " to prove the session alive", e);
        }
    }

    /**
     * Sends a {@code sync} of {@code path} on {@code zk} and waits for its answer at most the connection timeout.
     *
     * @throws LockBackendException if ZooKeeper did not answer within the connection timeout or refused
     */
    void syncSession(ZooKeeper zk, String path) {
        CompletableFuture<Integer> answered = new CompletableFuture<>();
        zk.sync(path, (rc, p, ctx) -> answered.complete(rc), null);
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
    }

    /** The failure of an acquire of {@code key} whose call failed with {@code e}. */
    LockBackendException acquireFailed(String key, Exception e) {
        if (e instanceof NoReply) {
            return new LockBackendException(
                    "ZooKeeper at " + where + " failed while acquiring key '" + key + "': " + e.getMessage(), e);
        }
        return new LockBackendException("ZooKeeper at " + where + " failed while acquiring key '" + key + "': " + e, e);
    }

    /**
     * Deletes a held node with a guaranteed delete: Curator goes on sending it, when the connection returns if it
     * must, until it succeeds, while this waits for its reply at most the connection timeout, whatever the Curator
     * client's retry policy. Without the guarantee a node whose delete was never sent would outlive the outage for
     * as long as the session does, which with an application's long-lived Curator client is for good. Keeps the
     * interrupt status.
     *
     * @return true if deleted, false if the node was gone already
     * @throws LockBackendException if the delete is not confirmed (it stays scheduled), naming {@code key}
     */
    boolean deleteHeld(String path, String key) {
        boolean interrupted = Thread.interrupted();
        try {
            // Wait for the connection first: a delete sent while it is down fails at once, and one sent into a new
            // session (the old one expired) must find the node gone, which makes the lease lost, not unreleased.
            if (!isConnected() && !curator.blockUntilConnected((int) connectionTimeoutMs, TimeUnit.MILLISECONDS)) {
                deleteInBackground(path);
                throw new LockBackendException("Not connected to ZooKeeper at " + where + " within "
                        + ZooKeeperSettings.CONNECTION_TIMEOUT + "=" + connectionTimeoutMs + ": key '"
                        + key + "' is not released yet" + scheduled(path));
            }
            call(reply -> curator.delete().guaranteed().inBackground(reply).forPath(path));
            return true;
        } catch (KeeperException.NoNodeException e) {
            return false;
        } catch (LockBackendException e) {
            throw e;
        } catch (NoReply e) {
            throw new LockBackendException(
                    "ZooKeeper at " + where + " did not confirm the release of key '" + key + "': " + e.getMessage()
                            + "; it is not released yet" + scheduled(path),
                    e);
        } catch (InterruptedException e) {
            interrupted = true;
            throw new LockBackendException(
                    "Interrupted while releasing key '" + key + "' at " + where + "; it is not released yet"
                            + scheduled(path),
                    e);
        } catch (Exception e) {
            throw new LockBackendException(
                    "ZooKeeper at " + where + " failed while releasing key '" + key + "': " + e
                            // the same test Curator makes before it schedules a failed guaranteed delete again
                            + (curator.getZookeeperClient().getRetryPolicy().allowRetry(e) ? scheduled(path) : ""),
                    e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static String scheduled(String path) {
        return "; the delete of its node " + path + " stays scheduled: Curator sends it when the connection"
                + " returns, while the client is open, and the node goes with the session otherwise";
    }

    /** A guaranteed delete that never waits: Curator sends it now or on reconnection, and retries until it is done. */
    void deleteInBackground(String path) {
        try {
            curator.delete().guaranteed().inBackground().forPath(path);
        } catch (Exception e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "Could not schedule the delete of lock node " + path + "; it vanishes with its session: " + e);
        }
    }

    /** A ZooKeeper call sent in the background: {@code reply} receives its reply. */
    interface Call {
        void send(BackgroundCallback reply) throws Exception;
    }

    /** The attempt was cancelled, or its deadline passed, while it waited for a reply. */
    static final class GaveUp extends Exception {
        private static final long serialVersionUID = 1L;

        GaveUp() {
            super(null, null, false, false);
        }
    }

    /** No reply within the connection timeout: to the recipe, a lost connection; the call may still complete. */
    static final class NoReply extends KeeperException.ConnectionLossException {
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
     * reply that comes later is dropped; a late create's node is deleted by the create's own callback.
     *
     * @throws GaveUp if the attempt was cancelled or its deadline passed first
     * @throws NoReply if no reply came within the connection timeout
     * @throws KeeperException the reply's error
     * @throws InterruptedException as {@link LockNode#awaitReply} says
     */
    CuratorEvent call(LockNode node, Call call) throws Exception {
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
    CuratorEvent call(Call call) throws Exception {
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
}
