package org.locksmith.lock.shedlock;

import java.time.Duration;
import java.util.Optional;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;

/**
 * A node that takes one ShedLock lock and is then killed by the test ({@link LocksmithLockProviderTest}): prints
 * {@code LOCKED} once it holds the lock, then waits, at most a minute, for a kill that never lets it unlock.
 * Arguments: the lock URL, the key prefix, the lock name, lockAtMostFor in ms.
 */
public final class CrashingNode {
    private CrashingNode() {}

    public static void main(String[] args) throws InterruptedException {
        LockClient client = Locks.open(args[0]);
        LocksmithLockProvider provider = new LocksmithLockProvider(client, args[1]);
        Optional<SimpleLock> lock = provider.lock(new LockConfiguration(
                ClockProvider.now(), args[2], Duration.ofMillis(Long.parseLong(args[3])), Duration.ZERO));
        System.out.println(lock.isPresent() ? "LOCKED" : "REFUSED");
        System.out.flush();
        Thread.sleep(60_000); // the test kills this JVM long before; the bound keeps a lost child from lingering
        System.exit(2);
    }
}
