package org.locksmith.lock.tck.reference;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;
import org.locksmith.lock.tck.LockFaults;
import org.locksmith.lock.tck.LockTck;

/**
 * The whole TCK against the file-based reference backend, opened by URL through its provider, with worker JVMs:
 * this is where the multi-process contracts (c01 processes, killed holders, c07 expiry after a crash) are proven.
 *
 * <p>Tagged thorough (-Pthorough): the default build proves the kit passes a correct backend with the memory reference and the four real backends.
 */
@Tag("thorough")
class FileReferenceTckTest extends LockTck {
    private static final Path DIR = newDirectory();

    static Path newDirectory() {
        try {
            return Files.createTempDirectory("locksmith-file-tck-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * {@code dir}, created again if an earlier run of the same class removed it: a broken variant may run several
     * times in one JVM, and its {@code @AfterAll} removes its directory after each.
     */
    static Path ensure(Path dir) {
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @AfterAll
    static void removeDirectory() throws IOException {
        removeTree(DIR);
    }

    static void removeTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    /** The directory this class's clients share; the fault and store-view hooks look there too. */
    Path dir() {
        return DIR;
    }

    String url() {
        return "file://" + dir() + "?leaseMs=" + timings().leaseTime().toMillis();
    }

    @Override
    protected LockClient newClient() {
        return Locks.open(url());
    }

    @Override
    protected Optional<String> workerUrl() {
        return Optional.of(url());
    }

    private FileLockBackend anyBackend() {
        return new FileLockBackend(dir(), timings().leaseTime());
    }

    @Override
    protected OptionalInt storeEntries(String key) {
        return OptionalInt.of(anyBackend().entries(key));
    }

    @Override
    protected LockFaults faults() {
        return new LockFaults() {
            @Override
            public Set<Fault> supported() {
                return Set.of(Fault.DELETE_LOCK_STATE);
            }

            @Override
            public void deleteLockState(String key) {
                anyBackend().deleteState(key);
            }
        };
    }
}
