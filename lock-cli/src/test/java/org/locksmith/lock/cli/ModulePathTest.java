package org.locksmith.lock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An application that is itself a module, run on the module path with the published jars as modules: {@code
 * Locks.open} finds each backend's provider through the module system ({@code provides} in lock-redis,
 * lock-mysql and lock-postgres, the service file of lock-zookeeper's automatic module) and takes a real lock on each store
 * (lock-jdbc-support, which lock-mysql and lock-postgres require, is a module too). The
 * backends' libraries that carry a module name (Jedis, commons-pool2, HikariCP, SLF4J) are on the module path too;
 * the rest (Curator, ZooKeeper, the JDBC drivers, Gson) stay on the class path, as an application would have them.
 */
class ModulePathTest {
    /** Class-path entries that go on the module path, by file name. */
    private static final Pattern MODULES =
            Pattern.compile("(lock-(api|redis|mysql|postgres|zookeeper|jdbc-support)-[^/]*\\.jar"
                    + "|jedis-.*\\.jar|commons-pool2-.*\\.jar|HikariCP-.*\\.jar|slf4j-api-.*\\.jar)");

    @TempDir
    Path dir;

    @Test
    void anApplicationModuleOpensEveryBackendThroughTheModuleSystem() throws Exception {
        List<String> modulePath = new ArrayList<>();
        List<String> classPath = new ArrayList<>();
        for (String entry : Cli.classPath().split(File.pathSeparator)) {
            String name = Path.of(entry).getFileName().toString();
            if (MODULES.matcher(name).matches()) {
                modulePath.add(entry);
            } else if (!entry.endsWith("test-classes")) {
                classPath.add(entry);
            }
        }
        assertThat(modulePath)
                .as("the published jars on the test class path (run after `package`, as `./mvnw verify` does): "
                        + Cli.classPath())
                .anyMatch(e -> e.contains("lock-api-"))
                .anyMatch(e -> e.contains("lock-jdbc-support-"))
                .anyMatch(e -> e.contains("lock-redis-"))
                .anyMatch(e -> e.contains("lock-mysql-"))
                .anyMatch(e -> e.contains("lock-postgres-"))
                .anyMatch(e -> e.contains("lock-zookeeper-"));

        Path app = compileApplication(modulePath);
        modulePath.add(0, app.toString());

        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1",
                "--module-path",
                String.join(File.pathSeparator, modulePath),
                "--class-path",
                String.join(File.pathSeparator, classPath),
                "--add-modules",
                "ALL-MODULE-PATH",
                "-m",
                "app/app.Main"));
        for (String backend : List.of("redis", "mysql", "postgres", "zookeeper")) {
            command.add(TestServers.url(backend));
        }
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as(out).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(out)
                .as("each provider comes from its module, and each store granted a lock")
                .contains("provider redis in module org.locksmith.lock.redis")
                .contains("provider mysql in module org.locksmith.lock.mysql")
                .contains("provider postgresql in module org.locksmith.lock.postgres")
                .contains("provider zookeeper in module org.locksmith.lock.zookeeper")
                .contains("granted redis")
                .contains("granted mysql")
                .contains("granted postgresql")
                .contains("granted zookeeper");
    }

    /** The application module: requires only the API, as an application's module would. */
    private Path compileApplication(List<String> modulePath) throws Exception {
        Path src = dir.resolve("src/app");
        Files.createDirectories(src.resolve("app"));
        Files.writeString(src.resolve("module-info.java"), "module app { requires org.locksmith.lock; }\n");
        Files.writeString(src.resolve("app/Main.java"), """
                package app;

                import java.time.Duration;
                import org.locksmith.lock.LockClient;
                import org.locksmith.lock.LockLease;
                import org.locksmith.lock.Locks;
                import org.locksmith.lock.spi.LockProvider;

                public final class Main {
                    public static void main(String[] urls) throws InterruptedException {
                        for (LockProvider p : Locks.providers()) {
                            System.out.println("provider " + p.name() + " in module "
                                    + p.getClass().getModule().getName());
                        }
                        for (String url : urls) {
                            try (LockClient c = Locks.open(url);
                                    LockLease l = c.lock("module-path").acquire(Duration.ofSeconds(20))) {
                                System.out.println("granted " + url.substring(0, url.indexOf(':'))
                                        + " token " + l.fencingToken());
                            }
                        }
                    }
                }
                """);
        Path out = dir.resolve("mods/app");
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertThat(javac).as("a JDK's compiler (this test runs on a JDK)").isNotNull();
        List<String> args = new ArrayList<>(List.of(
                "--release",
                "17",
                "--module-path",
                String.join(File.pathSeparator, modulePath),
                "-d",
                out.toString(),
                src.resolve("module-info.java").toString(),
                src.resolve("app/Main.java").toString()));
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        int rc = javac.run(null, err, err, args.toArray(String[]::new));
        assertThat(rc).as(err.toString(StandardCharsets.UTF_8)).isZero();
        assertThat(Set.of(out.resolve("module-info.class"), out.resolve("app/Main.class")))
                .allMatch(Files::exists);
        return out;
    }
}
