package org.locksmith.lock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The path an application takes: the Redis provider found by {@link java.util.ServiceLoader} from the jar's
 * registration, in a fresh JVM whose environment has no {@code LOCKSMITH_URL} (a child process, since a JVM cannot
 * unset its own environment).
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class RedisDiscoveryTest extends EnvironmentRedisTest {
    private static List<String> probe(String argument) throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder builder = new ProcessBuilder(
                        java, "-cp", System.getProperty("java.class.path"), DiscoveryProbe.class.getName(), argument)
                .redirectErrorStream(true);
        builder.environment().remove("LOCKSMITH_URL");
        Process process = builder.start();
        List<String> lines = new ArrayList<>();
        try (var reader = process.inputReader()) {
            reader.lines().forEach(lines::add);
        }
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("probe finished").isTrue();
        assertThat(process.exitValue())
                .as("probe exit status; output: %s", lines)
                .isZero();
        return lines;
    }

    @Test
    void locksOpenWithARedisUrlFindsTheProviderWithoutLocksmithUrl() throws Exception {
        String prefix = URLEncoder.encode("locksmith-test:discovery:", StandardCharsets.UTF_8);
        List<String> out = probe(url("prefix=" + prefix));
        assertThat(out).contains("providers=redis", "LOCKSMITH_URL=null", "backend=redis");
        assertThat(out).anyMatch(line -> line.matches("token=[1-9][0-9]*"));
    }

    @Test
    void locksOpenWithoutAnyUrlUsesTheOnlyProvidersDefaultUrl() throws Exception {
        List<String> out = probe("-");
        assertThat(out).contains("providers=redis", "LOCKSMITH_URL=null");
        // redis://127.0.0.1:6379: granted if a server runs there, else a LockBackendException naming it.
        assertThat(out)
                .anyMatch(
                        line -> line.equals("backend=redis") || line.startsWith("unreachable=Redis at 127.0.0.1:6379"));
    }
}
