package org.locksmith.lock.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A holder process paused (SIGSTOP) past its session timeout: when it continues, the core declares its leases run
 * out without any check reporting them, and the connections they held go back to the pool all the same, so the
 * process can take as many new locks as its pool has connections without releasing the lost ones first.
 */
class MySqlPausedHolderTest {
    private static final String BASE_URL = MySqlTestServer.baseUrl();
    private static final String TABLE = MySqlTestServer.uniqueTable("paused");

    @AfterAll
    static void dropTables() {
        for (MySqlStrategy s : new MySqlStrategy[] {MySqlStrategy.ROW, MySqlStrategy.NAMED}) {
            MySqlTestServer.dropTables(BASE_URL, TABLE + "_" + s.urlValue());
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = MySqlStrategy.class,
            names = {"ROW", "NAMED"})
    void leasesThatRanOutWhileTheProcessWasPausedGiveBackTheirConnections(MySqlStrategy strategy) throws Exception {
        String url = BASE_URL + "?strategy=" + strategy.urlValue() + "&table=" + TABLE + "_" + strategy.urlValue()
                + "&checkIntervalMs=200&sessionTimeoutMs=2000&timeoutMs=2000&poolSize=2";
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        // SIGSTOP and SIGCONT cannot be ignored or caught: no need to reset signal dispositions.
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                cp,
                PausedHolderMain.class.getName(),
                url,
                "2"));
        Process holder = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try {
            BufferedReader out =
                    new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
            List<String> lines = new ArrayList<>();
            String line;
            while ((line = out.readLine()) != null && !line.equals("HELD")) {
                lines.add(line);
            }
            assertThat(line).as("the holder's output: %s", lines).isEqualTo("HELD");
            signal(holder, "STOP");
            Thread.sleep(3_000); // past the 2 s session timeout
            signal(holder, "CONT");
            OutputStream in = holder.getOutputStream();
            in.write("go\n".getBytes(StandardCharsets.UTF_8));
            in.flush();
            while ((line = out.readLine()) != null) {
                lines.add(line);
            }
            assertThat(holder.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(lines).as("the holder's output").contains("VALID 0", "NEW 2");
        } finally {
            holder.destroyForcibly();
        }
    }

    private static void signal(Process p, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-s", signal, Long.toString(p.pid())).start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(kill.exitValue()).as("kill -s %s", signal).isZero();
    }
}
