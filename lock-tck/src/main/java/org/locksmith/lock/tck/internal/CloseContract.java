package org.locksmith.lock.tck.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;

/** Contract 13: close releases leases, fails waiters promptly, leaks no threads, and ends all further use. */
public final class CloseContract {
    private final TckEnv env;

    public CloseContract(TckEnv env) {
        this.env = env;
    }

    public void releasesLeases() throws Exception {
        LockClient a = env.client("A");
        LockClient b = env.client("B");
        String k1 = env.key("close-1");
        String k2 = env.key("close-2");
        LockLease l1 = a.lock(k1).acquire(Duration.ofSeconds(5));
        if (a.features().contains(LockFeature.REENTRANT)) {
            a.lock(k1).acquire(Duration.ofSeconds(5));
        }
        LockLease l2 = a.lock(k2).acquire(Duration.ofSeconds(5));
        a.close();
        Probes.assertGrantable(env, b, k1, "at once after client A, its holder, was closed");
        Probes.assertGrantable(env, b, k2, "at once after client A, its holder, was closed");
        assertThat(l1.isValid()).as(env.at(a, k1) + "lease of a closed client").isFalse();
        assertThat(l2.isValid()).as(env.at(a, k2) + "lease of a closed client").isFalse();
        assertThatThrownBy(l1::release)
                .as(env.at(a, k1) + "release of a lease its closed client already released")
                .isInstanceOfAny(IllegalStateException.class, IllegalMonitorStateException.class);
    }

    public void failsWaitersPromptly() throws Exception {
        LockClient holder = env.client("H");
        LockClient a = env.client("A");
        String key = env.key("close-waiter");
        LockLease held = holder.lock(key).acquire(Duration.ofSeconds(5));
        AtomicLong failedAt = new AtomicLong();
        Future<Throwable> waiter = env.fork(() -> {
            try {
                a.lock(key).acquire(Duration.ofSeconds(30)).release();
                return null;
            } catch (Throwable t) {
                failedAt.set(System.nanoTime());
                return t;
            }
        });
        Thread.sleep(150); // let the waiter block in the store
        long closedAt = System.nanoTime();
        a.close();
        Throwable thrown = waiter.get(15, TimeUnit.SECONDS);
        assertThat(thrown)
                .as(env.at(a, key) + "a waiter of a client being closed must fail with IllegalStateException")
                .isInstanceOf(IllegalStateException.class);
        long took = failedAt.get() - closedAt;
        assertThat(took)
                .as(env.at(a, key) + "the waiter failed " + Probes.ms(took) + " after close() began")
                .isLessThanOrEqualTo(TckEnv.allow(Duration.ofMillis(500)).toNanos());
        held.release();
        LockClient c = env.client("C");
        Probes.assertGrantable(env, c, key, "after the closed client's waiter was failed");
    }

    public void leaksNoThreads() throws Exception {
        Set<Thread> before = locksmithThreads();
        LockClient holder = env.client("H");
        LockClient a = env.client("A");
        String key = env.key("close-threads");
        LockLease held = holder.lock(key).acquire(Duration.ofSeconds(5));
        Future<Boolean> waiter = env.fork(() -> {
            try {
                a.lock(key).acquire(Duration.ofSeconds(30)).release();
            } catch (IllegalStateException expected) {
                // closed while waiting
            }
            return true;
        });
        try (LockLease other = a.lock(env.key("close-threads-2")).acquire(Duration.ofSeconds(5))) {
            assertThat(other.isValid()).isTrue();
        }
        Thread.sleep(100);
        held.release();
        a.close();
        holder.close();
        waiter.get(15, TimeUnit.SECONDS);
        Awaitility.await("threads named locksmith-* started by the closed clients to end")
                .atMost(TckEnv.allow(Duration.ofSeconds(5)))
                .pollInterval(Duration.ofMillis(50))
                .untilAsserted(() -> {
                    Set<String> leaked = locksmithThreads().stream()
                            .filter(t -> !before.contains(t))
                            .map(Thread::getName)
                            .collect(Collectors.toSet());
                    assertThat(leaked)
                            .as(env.at(a, key) + "locksmith-* threads still alive after both clients were closed")
                            .isEmpty();
                });
    }

    private static Set<Thread> locksmithThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("locksmith-"))
                .collect(Collectors.toSet());
    }

    public void noFurtherUse() throws Exception {
        LockClient a = env.client("A");
        String key = env.key("closed-use");
        var lock = a.lock(key);
        a.close();
        a.close(); // idempotent
        assertThatThrownBy(() -> a.lock(key))
                .as(env.at(a, key) + "lock(key) after close")
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> lock.acquire(Duration.ofSeconds(1)))
                .as(env.at(a, key) + "acquire through a lock obtained before close")
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(lock::tryAcquire)
                .as(env.at(a, key) + "tryAcquire after close")
                .isInstanceOf(IllegalStateException.class);
        assertThat(a.backend()).as("backend() after close").isNotBlank();
        assertThat(a.features()).as("features() after close").isNotNull();
    }
}
