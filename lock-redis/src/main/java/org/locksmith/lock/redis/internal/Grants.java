package org.locksmith.lock.redis.internal;

import static org.locksmith.lock.redis.internal.RedisFailures.asLong;

import java.net.ConnectException;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.spi.AcquireRequest;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * The store's side of a grant: one acquire script call ({@link #attempt}) and the release ({@link #release}). An
 * attempt never leaves a grant its caller does not know of: a grant whose reply was lost, or that fewer replicas
 * acknowledged than {@code waitReplicas}, is released again, owner-checked. Thread-safe.
 */
final class Grants {
    private static final System.Logger LOG = System.getLogger("org.locksmith.lock.redis");

    private final ScriptRunner scripts;
    private final RedisSettings settings;
    /** Where a clean-up release after a lost reply is sent from (the cancel-signal threads). */
    private final Executor cleanUps;

    private final String leaseMillis;
    private final String restartHoldOffMillis;
    private final String wakeTtlMillis;

    Grants(ScriptRunner scripts, RedisSettings settings, Executor cleanUps) {
        this.scripts = scripts;
        this.settings = settings;
        this.cleanUps = cleanUps;
        this.leaseMillis = Long.toString(settings.leaseTime().toMillis());
        this.restartHoldOffMillis = Long.toString(settings.restartHoldOff().toMillis());
        this.wakeTtlMillis = Long.toString(settings.wakeTtlMillis());
    }

    /**
     * One acquire script call. When it fails, only the reply may have been lost: Redis may have granted the lock to
     * this owner (unique to this attempt), which nobody would release before its lease ends. So unless the command
     * surely never left (no connection), the owner is released, owner-checked (harmless if nothing was granted).
     * When the server closed the connection it is alive, and the release runs before the failure is reported; when
     * it did not answer in time, a release now would as likely time out and double the failure's latency, so it is
     * sent once from a background thread instead.
     *
     * @param willWait whether the caller waits if refused (the holder's release then wakes a waiter)
     * @param waited whether the caller waited already (its grant then wakes the next waiter on release)
     * @return the script's reply: {@code {1, token}}, {@code {0, holder's PTTL}} or {@code {0, ms left, end second}}
     */
    List<?> attempt(LockKeys keys, AcquireRequest request, boolean willWait, boolean waited) {
        Object raw = attemptOnce(keys, request, willWait, waited);
        if (!(raw instanceof ScriptRunner.Replicated r)) {
            return (List<?>) raw;
        }
        List<?> reply = (List<?>) r.reply();
        if (asLong(reply.get(0)) == 1 && r.acknowledged() < settings.waitReplicas()) {
            try {
                releaseOwner(keys, request.ownerId());
            } catch (RuntimeException e) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "Could not release key '" + keys.userKey() + "' after too few"
                                + " replicas acknowledged its grant; it frees at its lease end: " + e);
            }
            throw new LockBackendException("Redis at " + settings.address() + " granted key '" + keys.userKey()
                    + "' but only " + r.acknowledged() + " of " + settings.waitReplicas() + " replicas acknowledged"
                    + " the grant within " + settings.waitReplicasTimeout().toMillis() + " ms (waitReplicas); the"
                    + " grant was released");
        }
        return reply;
    }

    private Object attemptOnce(LockKeys keys, AcquireRequest request, boolean willWait, boolean waited) {
        try {
            return scripts.scriptOn(
                    keys.slot(),
                    LockScripts.ACQUIRE,
                    LockScripts.ACQUIRE_SHA,
                    List.of(keys.hash()),
                    List.of(
                            request.ownerId(),
                            leaseMillis,
                            willWait ? "1" : "0",
                            waited ? "1" : "0",
                            restartHoldOffMillis));
        } catch (LockBackendException e) {
            ConnectException refused = RedisFailures.connectFailure(e);
            if (refused != null) {
                // Not a lost reply: no connection, so the script never left and there is nothing to clean up.
                throw new LockBackendException(
                        "Redis at " + settings.address() + " refused the connection (" + refused.getMessage()
                                + "): the acquire of key '" + keys.userKey() + "' was not sent, nothing was granted",
                        e);
            }
            if (RedisFailures.neverSent(e) || e.getCause() instanceof JedisDataException) {
                throw e; // not sent, or answered with an error: nothing was granted
            }
            cleanUpLostReply(keys, request.ownerId(), e);
            throw e;
        }
    }

    /** Releases what the attempt that failed with {@code e} may have been granted (see {@link #attempt}). */
    private void cleanUpLostReply(LockKeys keys, String owner, LockBackendException e) {
        if (RedisFailures.closedByServer(e)) {
            try {
                releaseOwner(keys, owner);
            } catch (JedisException cleanup) {
                e.addSuppressed(cleanup);
            }
            return;
        }
        try {
            cleanUps.execute(() -> {
                try {
                    releaseOwner(keys, owner);
                } catch (RuntimeException cleanup) {
                    LOG.log(
                            System.Logger.Level.WARNING,
                            "Could not release key '" + keys.userKey() + "' after an acquire whose reply was"
                                    + " lost; if it was granted it frees at its lease end: " + cleanup);
                }
            });
        } catch (RejectedExecutionException full) {
            e.addSuppressed(full);
        }
    }

    /** Releases {@code lease} if Redis still holds it for its owner, waking a waiter; true if it was held. */
    boolean release(RedisLease lease) {
        Object reply = scripts.script(
                LockScripts.RELEASE,
                LockScripts.RELEASE_SHA,
                List.of(lease.keys.hash(), lease.keys.wake()),
                List.of(lease.owner, wakeTtlMillis));
        return asLong(reply) == 1;
    }

    /** The release script for {@code owner}, once, without retries (a clean-up). */
    private void releaseOwner(LockKeys keys, String owner) {
        LockScripts.run(
                scripts.commandClient(),
                LockScripts.RELEASE,
                LockScripts.RELEASE_SHA,
                List.of(keys.hash(), keys.wake()),
                List.of(owner, wakeTtlMillis));
    }

    /** Why a server in its restart hold-off refuses, for the timeout's message and the log. */
    String holdOffRefusal(long endsAtEpochSecond) {
        return "Redis at " + settings.address() + " grants no lock until "
                + java.time.Instant.ofEpochSecond(endsAtEpochSecond)
                + " (server clock): it has been up for less than restartHoldOffMs=" + restartHoldOffMillis
                + ", since a server that restarted may have lost locks whose holders still believe they hold them;"
                + " set restartHoldOffMs=0 only for a server started empty for a test run (see lock-redis's README)";
    }
}
