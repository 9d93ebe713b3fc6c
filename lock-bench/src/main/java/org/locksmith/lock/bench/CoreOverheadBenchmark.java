package org.locksmith.lock.bench;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.locksmith.lock.DistributedLock;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.LockBackend;
import org.locksmith.lock.spi.RenewalReport;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What the shared core itself costs per uncontended acquire + release, and per re-entry: the same calls as S1, over
 * a backend that does no I/O (it grants at once and keeps a token), configured as a renewing leased store (Redis's
 * and MySQL lease mode's features) or as a session-bound one (ZooKeeper's). Whatever the store adds comes on top.
 *
 * <pre>
 * java -cp "$(cat lock-bench/target/classpath.txt):lock-bench/target/classes" org.openjdk.jmh.Main CoreOverhead
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class CoreOverheadBenchmark {

    /** {@code leased}: LEASE_EXPIRY + AUTO_RENEWAL; {@code session}: SESSION_BOUND with a session check. */
    @Param({"leased", "session"})
    public String store;

    private LockClient client;
    private DistributedLock lock;
    private DistributedLock reentryLock;
    private LockLease outer;

    @Setup(Level.Trial)
    public void open() {
        client = Locks.client(new NoIoBackend(store.equals("session")));
        lock = client.lock("core-overhead");
        reentryLock = client.lock("core-overhead-reentry");
    }

    @Benchmark
    public void acquireRelease() throws Exception {
        lock.acquire(Duration.ofSeconds(1)).release();
    }

    @Setup(Level.Iteration)
    public void holdOuter() throws Exception {
        outer = reentryLock.acquire(Duration.ofSeconds(1));
    }

    @Benchmark
    public void reentry() throws Exception {
        reentryLock.acquire(Duration.ofSeconds(1)).release(); // hold count 2, then back to 1: no backend call
    }

    @TearDown(Level.Iteration)
    public void releaseOuter() {
        outer.release();
    }

    @TearDown(Level.Trial)
    public void close() {
        client.close();
    }

    /** Grants at once, releases at once, renews everything; no I/O. */
    static final class NoIoBackend implements LockBackend {
        private final boolean session;
        private final AtomicLong tokens = new AtomicLong();

        NoIoBackend(boolean session) {
            this.session = session;
        }

        @Override
        public String name() {
            return "no-io";
        }

        @Override
        public Set<LockFeature> features() {
            return session
                    ? EnumSet.of(
                            LockFeature.REENTRANT,
                            LockFeature.FENCING,
                            LockFeature.SESSION_BOUND,
                            LockFeature.LOSS_DETECTION)
                    : EnumSet.of(
                            LockFeature.REENTRANT,
                            LockFeature.FENCING,
                            LockFeature.LEASE_EXPIRY,
                            LockFeature.AUTO_RENEWAL,
                            LockFeature.LOSS_DETECTION);
        }

        @Override
        public Duration leaseTime() {
            return session ? Duration.ZERO : Duration.ofSeconds(30);
        }

        @Override
        public Duration renewInterval() {
            return Duration.ofSeconds(10);
        }

        @Override
        public Duration sessionTimeout() {
            return session ? Duration.ofSeconds(30) : Duration.ZERO;
        }

        @Override
        public BackendLease acquire(AcquireRequest request) {
            long token = tokens.incrementAndGet();
            long at = System.nanoTime();
            return new BackendLease() {
                @Override
                public long fencingToken() {
                    return token;
                }

                @Override
                public long confirmedAtNanos() {
                    return at;
                }

                @Override
                public boolean release() {
                    return true;
                }
            };
        }

        @Override
        public void renew(List<BackendLease> leases, RenewalReport report) {
            long now = System.nanoTime();
            leases.forEach(l -> report.renewed(l, now));
        }

        @Override
        public void close() {}
    }
}
