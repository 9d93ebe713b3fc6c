package org.locksmith.lock.tck.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockObserver;

/**
 * Contract 17, close part: {@code close()} fails every async acquire whose future is not complete yet, also one
 * whose lease the store already granted while its completion still waits for a busy executor. What this catches is
 * a future that completes normally after close with a lease close already released (invalid, and its release
 * throws), or a lease left held in the store for nobody.
 */
public final class AsyncCloseContract {
    private final TckEnv env;

    public AsyncCloseContract(TckEnv env) {
        this.env = env;
    }

    private Duration op() {
        return TckEnv.allow(env.timings().operationTimeout());
    }

    /**
     * C17.8: a grant whose completion is queued on a busy executor when the client closes: the future fails with
     * IllegalStateException once the executor runs, and the key is free for another client.
     */
    public void closeFailsAFutureWhoseCompletionIsQueued() throws Exception {
        LockClient holder = env.client("H");
        LockClient w = env.client("W");
        LockClient b = env.client("B");
        String key = env.key("async-close-queued");
        CountDownLatch granted = new CountDownLatch(1);
        w.addObserver(new LockObserver() {
            @Override
            public void acquired(String backend, String k, long waitNanos, long fencingToken) {
                if (k.equals(key)) {
                    granted.countDown();
                }
            }
        });
        ExecutorService busy = Executors.newSingleThreadExecutor(r -> new Thread(r, "tck-busy-completion"));
        env.closeAtEnd(busy::shutdownNow);
        CountDownLatch gate = new CountDownLatch(1);
        busy.execute(() -> {
            try {
                gate.await(2, TimeUnit.MINUTES); // bounded: the test's own timeout is shorter
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        env.closeAtEnd(gate::countDown);
        LockLease held = holder.lock(key).acquire(op());
        CompletableFuture<LockLease> future = w.lock(key).acquireAsync(Duration.ofSeconds(30), busy);
        held.release();
        assertThat(granted.await(op().toMillis(), TimeUnit.MILLISECONDS))
                .as(env.at(w, key) + "the store granted client W's acquireAsync within " + op().toMillis()
                        + " ms of the holder's release")
                .isTrue();
        assertThat(future.isDone())
                .as(env.at(w, key) + "future of an acquireAsync whose completion executor is busy")
                .isFalse();
        w.close();
        gate.countDown();
        LockLease lease;
        try {
            lease = future.get(op().toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            assertThat(e.getCause())
                    .as(env.at(w, key) + "failure of an acquireAsync pending (its completion queued on a busy"
                            + " executor) when its client was closed")
                    .isInstanceOf(IllegalStateException.class);
            lease = null;
        } catch (TimeoutException e) {
            throw new AssertionError(env.at(w, key) + "an acquireAsync pending when its client was closed did not"
                    + " complete within " + op().toMillis() + " ms of its executor running again");
        }
        if (lease != null) {
            boolean valid = lease.isValid();
            try {
                lease.release();
            } catch (RuntimeException ignored) {
                // the point is reported below
            }
            fail(env.at(w, key) + "an acquireAsync pending when its client was closed (its grant waiting for a busy"
                    + " executor) completed normally, with a lease whose isValid() is " + valid + "; close() must"
                    + " fail pending futures with IllegalStateException");
        }
        Probes.assertGrantable(env, b, key, "after client W, granted the key for a future it then failed, closed");
    }
}
