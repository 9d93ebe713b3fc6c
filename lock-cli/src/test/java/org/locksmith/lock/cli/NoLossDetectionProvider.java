package org.locksmith.lock.cli;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.Locks;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.LockBackend;
import org.locksmith.lock.spi.LockProvider;
import org.locksmith.lock.spi.LockUrl;

/**
 * {@code redis-noloss://host:port?...}: the real Redis backend with {@link LockFeature#LOSS_DETECTION} taken out of
 * its declared features, so that {@code locksmith run} meets a backend that does not report lost leases (none of
 * the shipped ones is such). Registered in the test resources, so the locksmith JVMs the tests start find it.
 */
public final class NoLossDetectionProvider implements LockProvider {
    static final String SCHEME = "redis-noloss";

    @Override
    public String name() {
        return "redis-without-loss-detection";
    }

    @Override
    public Set<String> schemes() {
        return Set.of(SCHEME);
    }

    @Override
    public String defaultUrl() {
        return SCHEME + "://127.0.0.1:6379";
    }

    @Override
    public Set<String> parameters() {
        return redis().parameters();
    }

    @Override
    public LockBackend open(LockUrl url) {
        String hosts = url.hosts().stream().map(LockUrl.HostAndPort::toString).collect(Collectors.joining(","));
        String query = url.parameters().entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining("&"));
        LockBackend redis = redis().open(LockUrl.parse("redis://" + hosts + (query.isEmpty() ? "" : "?" + query)));
        return new WithoutLossDetection(redis);
    }

    private static LockProvider redis() {
        return Locks.providers().stream()
                .filter(p -> p.schemes().contains("redis"))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("lock-redis is not on the test class path"));
    }

    private record WithoutLossDetection(LockBackend redis) implements LockBackend {
        @Override
        public String name() {
            return "redis-without-loss-detection";
        }

        @Override
        public Set<LockFeature> features() {
            Set<LockFeature> features = EnumSet.copyOf(redis.features());
            features.remove(LockFeature.LOSS_DETECTION);
            return features;
        }

        @Override
        public Duration leaseTime() {
            return redis.leaseTime();
        }

        @Override
        public Duration renewInterval() {
            return redis.renewInterval();
        }

        @Override
        public BackendLease acquire(AcquireRequest request) throws InterruptedException {
            return redis.acquire(request);
        }

        @Override
        public List<BackendLease> renew(List<BackendLease> leases) {
            return redis.renew(leases);
        }

        @Override
        public void close() {
            redis.close();
        }
    }
}
