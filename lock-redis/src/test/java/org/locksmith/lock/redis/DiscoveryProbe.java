package org.locksmith.lock.redis;

import java.util.stream.Collectors;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.spi.LockProvider;

/**
 * Run in a child JVM by {@link RedisDiscoveryTest}, whose environment it cannot change in-process: opens a client
 * the way an application does, through {@link java.util.ServiceLoader}, and prints what it found.
 */
public final class DiscoveryProbe {
    private DiscoveryProbe() {}

    /** {@code args[0]}: a URL for {@code Locks.open(url)}, or {@code -} for {@code Locks.open()}. */
    public static void main(String[] args) {
        System.out.println("providers="
                + Locks.providers().stream().map(LockProvider::name).collect(Collectors.joining(",")));
        System.out.println("LOCKSMITH_URL=" + System.getenv("LOCKSMITH_URL"));
        try (LockClient locks = args[0].equals("-") ? Locks.open() : Locks.open(args[0])) {
            System.out.println("backend=" + locks.backend());
            if (args[0].equals("-")) {
                // The default URL has the default prefix: write nothing where other runs' keys may live.
                return;
            }
            try (LockLease lease = locks.lock("discovery").tryAcquire().orElseThrow()) {
                System.out.println("token=" + lease.fencingToken());
            }
        } catch (LockBackendException e) {
            System.out.println("unreachable=" + e.getMessage());
        }
    }
}
