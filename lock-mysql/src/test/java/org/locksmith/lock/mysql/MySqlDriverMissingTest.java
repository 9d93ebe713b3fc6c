package org.locksmith.lock.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Without a JDBC driver on the class path, opening a {@code mysql://} URL says which driver to add. */
class MySqlDriverMissingTest {

    @Test
    void missingDriverIsNamedBeforeAnyConnection() throws Exception {
        String cp = System.getProperty("surefire.test.class.path");
        if (cp == null || cp.isBlank()) {
            cp = System.getProperty("java.class.path");
        }
        List<String> entries = Arrays.asList(cp.split(File.pathSeparator));
        String withoutDriver = entries.stream()
                .filter(e -> !e.contains("mysql-connector") && !e.contains("mariadb-java-client"))
                .collect(Collectors.joining(File.pathSeparator));
        assertThat(withoutDriver.length())
                .as("a driver jar was on the class path")
                .isLessThan(cp.length());
        Process p = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xmx64m",
                        "-XX:TieredStopAtLevel=1",
                        "-cp",
                        withoutDriver,
                        DriverlessOpen.class.getName(),
                        // nothing listens on port 1: an attempt to connect would fail differently
                        "mysql://root@127.0.0.1:1/test?timeoutMs=1000")
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as(out).isTrue();
        assertThat(out)
                .as("what opening without a driver printed")
                .contains("FAILED java.lang.IllegalStateException")
                .contains("no JDBC driver for jdbc:mysql:")
                .contains("com.mysql:mysql-connector-j");
    }
}
