package org.locksmith.lock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/locksmith} builds the jar when it is missing or older than the sources, and only then. Run in a copy
 * of the tree's layout whose {@code mvnw} and {@code java} only record that they ran, so no real build happens.
 */
class LauncherTest {

    @TempDir
    Path root;

    private Path builds;

    private long buildCount() throws Exception {
        return Files.exists(builds) ? Files.readAllLines(builds).size() : 0;
    }

    private static void script(Path file, String text) throws Exception {
        Files.createDirectories(file.getParent());
        Files.writeString(file, text, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    @Test
    void rebuildsOnlyWhenMissingOrOlderThanTheSources() throws Exception {
        builds = root.resolve("builds");
        script(root.resolve("lock-cli/bin/locksmith"), Files.readString(Path.of("bin/locksmith")));
        script(
                root.resolve("mvnw"),
                "#!/bin/sh\necho build >> \"" + builds + "\"\nmkdir -p lock-cli/target\n"
                        + "touch lock-cli/target/lock-cli-0.1.0-SNAPSHOT.jar\n");
        Files.writeString(root.resolve("pom.xml"), "<project/>");
        Path source = root.resolve("lock-api/src/main/java/Some.java");
        Files.createDirectories(source.getParent());
        Files.writeString(source, "class Some {}");
        Path jdk = root.resolve("jdk");
        script(jdk.resolve("bin/java"), "#!/bin/sh\necho \"java $*\"\n");

        String first = launchWith(jdk);
        assertThat(buildCount()).as("built when missing: %s", first).isEqualTo(1);
        assertThat(first).contains("java -jar").contains("lock-cli-0.1.0-SNAPSHOT.jar --version");

        launchWith(jdk);
        assertThat(buildCount()).as("not rebuilt while up to date").isEqualTo(1);

        Path jar = root.resolve("lock-cli/target/lock-cli-0.1.0-SNAPSHOT.jar");
        Instant built = Files.getLastModifiedTime(jar).toInstant();
        Files.setLastModifiedTime(source, FileTime.from(built.plusSeconds(5)));
        String third = launchWith(jdk);
        assertThat(buildCount())
                .as("rebuilt once a source is newer than the jar: %s", third)
                .isEqualTo(2);
        assertThat(third).contains("older than the sources");
    }

    private String launchWith(Path jdk) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(
                        List.of(root.resolve("lock-cli/bin/locksmith").toString(), "--version"))
                .redirectErrorStream(true);
        pb.environment().put("JAVA_HOME", jdk.toString());
        pb.environment().remove("LOCKSMITH_REBUILD");
        Process p = pb.start();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("bin/locksmith did not end within 30 s");
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }
}
