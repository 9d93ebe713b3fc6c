package org.locksmith.lock.bench.contenders;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.locksmith.lock.bench.Contender;

/** A peer's {@link Lock} (Redisson's RLock, Spring's registry locks) as a benchmark handle. */
final class JucLockHandle implements Contender.Handle {
    private final String contender;
    private final String key;
    private final Lock lock;

    JucLockHandle(String contender, String key, Lock lock) {
        this.contender = contender;
        this.key = key;
        this.lock = lock;
    }

    @Override
    public void lock() throws InterruptedException {
        if (!lock.tryLock(Contender.GRANT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException(
                    contender + " was not granted " + key + " within " + Contender.GRANT_TIMEOUT.toSeconds() + " s");
        }
    }

    @Override
    public void unlock() {
        lock.unlock();
    }
}
