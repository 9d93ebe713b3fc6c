package org.locksmith.lock.tck.reference;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import org.locksmith.lock.spi.LockBackend;
import org.locksmith.lock.spi.LockProvider;
import org.locksmith.lock.spi.LockUrl;

/**
 * {@code file:///absolute/dir?leaseMs=1000}: the multi-process reference backend, registered in the test
 * resources so that TCK worker JVMs can open it with {@code Locks.open(url)}.
 */
public final class FileLockProvider implements LockProvider {
    @Override
    public String name() {
        return "reference-file";
    }

    @Override
    public Set<String> schemes() {
        return Set.of("file");
    }

    @Override
    public String defaultUrl() {
        return "file:///tmp/locksmith-file-locks";
    }

    @Override
    public Set<String> parameters() {
        return Set.of("leaseMs", "declaredLeaseMs", "defect", "sessionMs");
    }

    @Override
    public LockBackend open(LockUrl url) {
        if (url.path().isEmpty()) {
            throw new IllegalArgumentException("Lock URL " + url + " needs a directory: file:///absolute/dir");
        }
        Duration lease =
                url.millisParameter("leaseMs", Duration.ofSeconds(30), Duration.ofMillis(100), Duration.ofHours(1));
        Path dir = Path.of("/" + url.path());
        if (!Files.isDirectory(dir)) {
            throw new IllegalArgumentException("Lock URL " + url + ": " + dir + " is not a directory; create it first");
        }
        // Test-only defect for the TCK's self-test: declare a longer lease than the store keeps.
        Duration declared = url.millisParameter("declaredLeaseMs", lease, Duration.ofMillis(100), Duration.ofHours(1));
        // Test-only defects for the TCK's self-test, by FileLockBackend.Defect name.
        FileLockBackend.Defect defect = FileLockBackend.Defect.valueOf(url.parameter("defect")
                .orElse("NONE")
                .toUpperCase(java.util.Locale.ROOT)
                .replace('-', '_'));
        // Test-only: the session timeout the DECLARES_SESSION_BOUND defect declares.
        Duration session =
                url.millisParameter("sessionMs", Duration.ofSeconds(2), Duration.ofMillis(100), Duration.ofHours(1));
        return new FileLockBackend(dir, lease, declared, defect, session);
    }
}
