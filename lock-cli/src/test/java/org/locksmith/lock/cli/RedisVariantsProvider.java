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
import org.locksmith.lock.spi.RenewalReport;

/**
 * The real Redis backend altered in one way each, for behaviour of {@code locksmith run} that no shipped backend
 * shows on demand. Registered in the test resources, so the locksmith JVMs the tests start find it.
 *
 * <ul>
 *   <li>{@code redis-noloss://host:port?...}: {@link LockFeature#LOSS_DETECTION} taken out of the declared features
 *       (every shipped backend declares it);
 *   <li>{@code redis-slow://host:port?...}: every acquire first prints {@value #SLOW_ATTEMPT} on stderr and then
 *       takes {@link #SLOW_TIME} before it reaches Redis, interruptibly, as a store client such as Curator waits for a
 *       reply: a window in which a signal reliably lands during locksmith's first attempt.
 * </ul>
 */
public final class RedisVariantsProvider implements LockProvider {
    static final String NO_LOSS_DETECTION = "redis-noloss";
    static final String SLOW = "redis-slow";
    static final String SLOW_ATTEMPT = "locksmith-test: slow acquire attempt started";
    static final Duration SLOW_TIME = Duration.ofSeconds(30);

    @Override
    public String name() {
        return "redis-variants";
    }

    @Override
    public Set<String> schemes() {
        return Set.of(NO_LOSS_DETECTION, SLOW);
    }

    @Override
    public String defaultUrl() {
        return NO_LOSS_DETECTION + "://127.0.0.1:6379";
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
        return new Variant(url.scheme(), redis);
    }

    private static LockProvider redis() {
        return Locks.providers().stream()
                .filter(p -> p.schemes().contains("redis"))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("lock-redis is not on the test class path"));
    }

    private record Variant(String scheme, LockBackend redis) implements LockBackend {
        @Override
        public String name() {
            return scheme.equals(NO_LOSS_DETECTION) ? "redis-without-loss-detection" : "redis-slow";
        }

        @Override
        public Set<LockFeature> features() {
            Set<LockFeature> features = EnumSet.copyOf(redis.features());
            if (scheme.equals(NO_LOSS_DETECTION)) {
                features.remove(LockFeature.LOSS_DETECTION);
            }
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
            if (scheme.equals(SLOW)) {
                System.err.println(SLOW_ATTEMPT);
                System.err.flush();
                Thread.sleep(SLOW_TIME.toMillis()); // the slow store's reply; an interrupt ends it, as in Curator
            }
            return redis.acquire(request);
        }

        @Override
        public void renew(List<BackendLease> leases, RenewalReport report) {
            redis.renew(leases, report);
        }

        @Override
        public void close() {
            redis.close();
        }
    }
}
