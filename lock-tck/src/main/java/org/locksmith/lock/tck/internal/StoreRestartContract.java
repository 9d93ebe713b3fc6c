package org.locksmith.lock.tck.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockException;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.tck.LockFaults;

/**
 * Contract 1 across a restart of the store ({@link LockFaults.Fault#RESTART_STORE}, which loses whatever the store
 * loses in a crash): a client holds a key while the store restarts, and another client asks for the key as soon as
 * the store serves again. Whatever the store kept, the two leases must not be valid at the same time: a store that
 * forgot the lock may grant it to the other client only once the holder can no longer believe it holds (its lease
 * or session bound has run out, or it was told), and the holder must be told (loss listener) rather than lose it
 * silently. A store that kept the lock keeps the other client out until the holder releases.
 */
public final class StoreRestartContract {
    private final TckEnv env;
    private final String key;
    private final LockClient holder;
    private final LockClient other;
    /** The clock before the latest look at the holder's lease that said valid (epoch microseconds). */
    private final AtomicLong lastValidMicros = new AtomicLong(Long.MIN_VALUE);

    private final AtomicBoolean watching = new AtomicBoolean(true);
    /** When the other client's {@code tryAcquire} returned (epoch microseconds, read right after it returned). */
    private final AtomicLong grantedMicros = new AtomicLong();

    private final LockFaults.Fault restart;

    /** @param restart {@link LockFaults.Fault#RESTART_STORE} or {@link LockFaults.Fault#RESTART_STORE_EMPTY} */
    public StoreRestartContract(TckEnv env, LockFaults.Fault restart) {
        this.env = env;
        this.restart = restart;
        this.key = env.key("restart-held");
        this.holder = env.client("holder");
        this.other = env.client("other");
    }

    public void holderNeverValidWhileAnotherHoldsAcrossRestart() throws Exception {
        LockLease lease = holder.lock(key).acquire(TckEnv.allow(env.timings().operationTimeout()));
        long token = env.has(LockFeature.FENCING) ? lease.fencingToken() : -1;
        CompletableFuture<LockLostException> lost = new CompletableFuture<>();
        lease.onLost(lost::complete);
        // The holder's belief, looked at continuously: the clock is read before each look, so a look that says
        // "valid" proves validity at or after the recorded moment.
        Future<?> watcher = env.fork(() -> {
            while (watching.get()) {
                long now = nowMicros();
                if (lease.isValid()) {
                    lastValidMicros.accumulateAndGet(now, Math::max);
                }
                LockSupport.parkNanos(200_000);
            }
            return null;
        });

        long restartAt = System.nanoTime();
        restart(env, restart);
        env.note("store restart took (ms)", TckEnv.millisSince(restartAt));
        long servingAt = System.nanoTime();

        Duration bound = KilledHolder.freeBound(env)
                .orElse(Duration.ZERO)
                .plus(TckEnv.allow(env.timings().operationTimeout().multipliedBy(3)));
        // The other client's lease is thread-owned: it is taken and released on one forked thread.
        CompletableFuture<Optional<LockLease>> asked = new CompletableFuture<>();
        CountDownLatch done = new CountDownLatch(1);
        Future<?> asker = env.fork(() -> {
            // A client may fail while it reconnects to the restarted store: it asks again until the bound.
            long until = System.nanoTime() + bound.toNanos();
            Optional<LockLease> got = Optional.empty();
            try {
                for (boolean asking = true; asking; ) {
                    try {
                        got = other.lock(key).tryAcquire(Duration.ofNanos(Math.max(0, until - System.nanoTime())));
                        asking = false;
                    } catch (LockBackendException e) {
                        asking = until - System.nanoTime() > 0;
                        Thread.sleep(20);
                    }
                }
            } catch (Throwable e) {
                asked.completeExceptionally(e);
                throw e;
            }
            grantedMicros.set(nowMicros());
            asked.complete(got);
            if (got.isPresent()) {
                done.await();
                got.get().release();
            }
            return null;
        });
        boolean holderReleased = false;
        try {
            // Long enough for a holder whose lock survived to have confirmed it again on the restarted store.
            Duration reconfirm = TckEnv.allow(env.timings()
                    .operationTimeout()
                    .plus(max(env.timings().leaseTime(), env.timings().sessionTimeout())));
            Optional<LockLease> granted = waitFor(asked, reconfirm);
            if (granted == null && lease.isValid()) {
                // The store kept the lock and the holder confirmed it: the other client waits for the release.
                watching.set(false);
                watcher.get(5, TimeUnit.SECONDS);
                long releasedAt = System.nanoTime();
                lease.release();
                holderReleased = true;
                Duration handoff = TckEnv.allow(env.timings().operationTimeout());
                granted = waitFor(asked, handoff);
                if (granted == null || granted.isEmpty()) {
                    fail(env.at(other, key) + "not granted within " + handoff.toMillis() + " ms after the holder"
                            + " released it (the holder kept its lock across a store restart)");
                }
                env.note("restart: lock kept; release -> grant (ms)", TckEnv.millisSince(releasedAt));
            } else if (granted == null) {
                granted = waitFor(asked, bound);
            }
            if (granted == null || granted.isEmpty()) {
                fail(env.at(other, key) + "nobody holds the key after a store restart: not granted within "
                        + bound.toMillis() + " ms while the holder's lease is " + (lease.isValid() ? "" : "in")
                        + "valid (holder told of a loss: "
                        + (lost.isDone() ? lost.getNow(null).getMessage() : "no")
                        + "; the store's records of the key: "
                        + env.storeEntries(key) + ")");
            }
            LockLease next = granted.get();
            if (!holderReleased) {
                env.note("restart: serving -> grant to another client (ms)", TckEnv.millisSince(servingAt));
                checkForgottenLock(lease, lost, watcher, bound);
            }
            if (env.has(LockFeature.FENCING)) {
                assertThat(next.fencingToken())
                        .as(env.at(other, key) + "token granted after a store restart; the holder had " + token)
                        .isGreaterThan(token);
            }
            assertThat(next.isValid())
                    .as(env.at(other, key) + "the lease granted after the restart")
                    .isTrue();
        } finally {
            watching.set(false);
            done.countDown();
            asker.get(
                    TckEnv.allow(env.timings().operationTimeout().multipliedBy(2))
                            .toMillis(),
                    TimeUnit.MILLISECONDS);
            if (!holderReleased) {
                try {
                    lease.release();
                } catch (LockException expected) {
                    // Lost in the restart: release says so.
                }
            }
        }
    }

    /**
     * The store forgot the holder's lock and granted it to the other client: the holder must be told, and none of
     * its looks may have said valid at or after that grant.
     */
    private void checkForgottenLock(
            LockLease lease, CompletableFuture<LockLostException> lost, Future<?> watcher, Duration bound)
            throws Exception {
        Duration settle = TckEnv.allow(env.timings().operationTimeout().plus(bound));
        try {
            lost.get(settle.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            fail(env.at(holder, key) + "lost silently: another client was granted the key after a store restart,"
                    + " and the holder's loss listener was not called within " + settle.toMillis() + " ms (isValid()"
                    + " == " + lease.isValid() + ")");
        }
        watching.set(false);
        watcher.get(5, TimeUnit.SECONDS);
        long last = lastValidMicros.get();
        long grantAt = grantedMicros.get();
        if (last >= grantAt) {
            fail(env.at(holder, key) + "two valid holders across a store restart: the holder said isValid() == true "
                    + (last - grantAt) + " us after another client was granted the key (the store forgot the lock;"
                    + " it must not grant it while a holder's lease or session bound can still be running, for"
                    + " example by granting nothing for that long after it starts)");
        }
        env.note(
                "restart: holder's last valid look -> other's grant (ms)",
                last == Long.MIN_VALUE ? "no valid look after the restart began" : (grantAt - last) / 1000);
    }

    /** The outcome of {@code f} if it completes within {@code d}, else null; fails if the other client's ask did. */
    private Optional<LockLease> waitFor(CompletableFuture<Optional<LockLease>> f, Duration d) throws Exception {
        try {
            return f.get(d.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            return null;
        } catch (ExecutionException e) {
            throw new AssertionError(
                    env.at(other, key) + "asking for the key after a store restart failed: " + e.getCause(),
                    e.getCause());
        }
    }

    /** Inflicts {@code restart}, {@link LockFaults.Fault#RESTART_STORE} or {@link LockFaults.Fault#RESTART_STORE_EMPTY}. */
    static void restart(TckEnv env, LockFaults.Fault restart) {
        switch (restart) {
            case RESTART_STORE -> env.faults().restartStore();
            case RESTART_STORE_EMPTY -> env.faults().restartStoreEmpty();
            default -> throw new IllegalArgumentException(restart + " is not a restart");
        }
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    private static long nowMicros() {
        return ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
    }
}
