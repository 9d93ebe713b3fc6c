package org.locksmith.lock;

import java.util.Set;
import org.locksmith.lock.spi.LockBackend;
import org.locksmith.lock.spi.LockProvider;
import org.locksmith.lock.spi.LockUrl;

/** Registered through META-INF/services in the test class path, to prove discovery. */
public final class MemoryLockProvider implements LockProvider {
    static volatile LockUrl lastUrl;

    @Override
    public String name() {
        return "memory";
    }

    @Override
    public Set<String> schemes() {
        return Set.of("memory");
    }

    @Override
    public String defaultUrl() {
        return "memory://local";
    }

    @Override
    public Set<String> parameters() {
        return Set.of("leaseMs");
    }

    @Override
    public LockBackend open(LockUrl url) {
        url.longParameter("leaseMs", 30_000, 1, Long.MAX_VALUE);
        lastUrl = url;
        return new MemoryBackend();
    }
}
