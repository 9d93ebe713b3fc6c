package org.locksmith.lock.bench.contenders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;
import org.springframework.dao.CannotAcquireLockException;

/**
 * A Spring registry lock that reports itself evicted (as Spring Integration does when eight S6 threads obtain locks
 * at once: seen failing the smoke benchmark in CI) is obtained again, as its message asks; other failures are the
 * peer's and propagate.
 */
class JucLockHandleTest {

    @Test
    void aLockObjectEvictedFromSpringsCacheIsObtainedAgain() throws Exception {
        List<Lock> handedOut = new ArrayList<>();
        JucLockHandle handle = new JucLockHandle(
                "spring-test",
                "k",
                () -> {
                    Lock l = handedOut.isEmpty() ? new EvictedLock() : new ReentrantLock();
                    handedOut.add(l);
                    return l;
                },
                SpringRegistries::evictedFromCache,
                new AtomicBoolean());

        handle.lock();

        assertThat(handedOut).hasSize(2);
        assertThat(((ReentrantLock) handedOut.get(1)).isHeldByCurrentThread()).isTrue();
        handle.unlock();
        assertThat(((ReentrantLock) handedOut.get(1)).isLocked()).isFalse();
    }

    @Test
    void anyOtherFailureOfThePeerPropagates() {
        JucLockHandle handle = new JucLockHandle(
                "spring-test",
                "k",
                () -> new EvictedLock("Failed to lock mutex: connection refused"),
                SpringRegistries::evictedFromCache,
                new AtomicBoolean());

        assertThatThrownBy(handle::lock).isInstanceOf(CannotAcquireLockException.class);
    }

    /** A lock whose attempts fail as a Spring registry lock does. */
    private static final class EvictedLock extends ReentrantLock {
        private final String cause;

        EvictedLock() {
            this("The lock 'k' was evicted from the exhausted cache. Obtain a fresh one from RedisLockRegistry{}");
        }

        EvictedLock(String cause) {
            this.cause = cause;
        }

        @Override
        public boolean tryLock(long timeout, java.util.concurrent.TimeUnit unit) {
            throw new CannotAcquireLockException("Failed to lock mutex at k", new IllegalStateException(cause));
        }
    }
}
