package org.locksmith.lock.testservers;

import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.embedded.core.ExecutableProvider;

/**
 * A {@code redis-server} the test starts on a free loopback port, with no persistence ({@code --save ""
 * --appendonly no}), so that a kill and restart loses every key, as a crash of an unpersisted Redis does. Tests may
 * kill, restart and pause (SIGSTOP) it, which they must never do to the shared server of {@link TestRedis};
 * {@link #close()} stops it and deletes its files. The binary is the installed {@code redis-server}, else the one
 * embedded-redis ships ({@link #binary()}).
 */
public final class PrivateRedis implements AutoCloseable {
    /** Set this system property to true to use embedded-redis's bundled binary even where redis-server is installed. */
    private static final String BUNDLED_PROPERTY = "locksmith.test.bundledRedis";

    private final int port;
    private final List<String> extraArgs;
    private final Path dir;
    private final String password;
    private Process process;

    private PrivateRedis(int port, List<String> extraArgs, String password) throws IOException {
        this.port = port;
        this.password = password;
        this.extraArgs = List.copyOf(extraArgs);
        this.dir = Files.createTempDirectory("locksmith-redis-" + port + "-");
    }

    /**
     * Starts a private server and waits until it answers PING.
     *
     * @param extraArgs further {@code redis-server} arguments, such as {@code "--maxmemory", "1mb"}
     * @return the running server, to be closed by the caller
     * @throws IllegalStateException if it does not start, saying what to install if {@code redis-server} is missing
     */
    public static PrivateRedis start(String... extraArgs) {
        return start(List.of(extraArgs), null);
    }

    private static PrivateRedis start(List<String> args, String password) {
        try {
            PrivateRedis redis = new PrivateRedis(freePort(), args, password);
            try {
                redis.startProcess();
            } catch (RuntimeException e) {
                redis.close(); // never leave a half-started server behind
                throw e;
            }
            return redis;
        } catch (IOException e) {
            throw new IllegalStateException("Could not start a private redis-server: " + e.getMessage(), e);
        }
    }

    /**
     * Starts a private server that requires {@code password} ({@code requirepass}); {@link #jedis()} sends it.
     *
     * @param password the server's password
     * @return the running server, to be closed by the caller
     * @throws IllegalStateException if it does not start
     */
    public static PrivateRedis startWithPassword(String password) {
        return start(List.of("--requirepass", password), password);
    }

    /**
     * The installed {@code redis-server} if there is one, else the Redis 6.2 binary that embedded-redis ships for
     * this platform: the fault and cluster tests run on a fresh machine with only a JDK too.
     *
     * @return the path of an executable {@code redis-server}
     * @throws IllegalStateException saying what to install, if there is neither
     */
    public static String binary() {
        if (Boolean.getBoolean(BUNDLED_PROPERTY)) {
            return bundled();
        }
        for (String candidate : new String[] {"/usr/bin/redis-server", "/usr/local/bin/redis-server"}) {
            if (new File(candidate).canExecute()) {
                return candidate;
            }
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(File.pathSeparator)) {
                File f = new File(dir, "redis-server");
                if (f.canExecute()) {
                    return f.getPath();
                }
            }
        }
        return bundled();
    }

    private static String bundled() {
        try {
            File bundled = ExecutableProvider.newJarResourceProvider().get();
            if (bundled.canExecute() || bundled.setExecutable(true)) {
                return bundled.getPath();
            }
        } catch (IOException | RuntimeException e) {
            // fall through to the message below
        }
        throw new IllegalStateException("The fault, restart and cluster tests start their own redis-server on a free"
                + " port: install it (apt-get install redis-server, brew install redis) or put redis-server on the"
                + " PATH (embedded-redis has no binary for this platform)");
    }

    /**
     * A port of the loopback address that was free a moment ago (another process may take it before the caller
     * binds it).
     *
     * @return the port
     * @throws UncheckedIOException if no port can be bound
     */
    public static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free port on the loopback address", e);
        }
    }

    private void startProcess() throws IOException {
        List<String> cmd = new ArrayList<>(List.of(
                binary(),
                "--port",
                Integer.toString(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                dir.toString(),
                "--daemonize",
                "no",
                "--loglevel",
                "warning"));
        cmd.addAll(extraArgs);
        process = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("redis.log").toFile())
                .start();
        await("private redis-server on port " + port + " to answer PING")
                .atMost(Duration.ofSeconds(15))
                .pollInterval(Duration.ofMillis(20))
                .ignoreExceptions()
                .until(() -> {
                    if (!process.isAlive()) {
                        throw new IllegalStateException(
                                "redis-server exited: " + Files.readString(dir.resolve("redis.log")));
                    }
                    try (Jedis j = jedis()) {
                        return "PONG".equals(j.ping());
                    }
                });
    }

    /**
     * The server's port on 127.0.0.1; it stays the same across {@link #restart()}.
     *
     * @return the port
     */
    public int port() {
        return port;
    }

    /**
     * Where the server answers.
     *
     * @return {@code redis://127.0.0.1:PORT}
     */
    public String url() {
        return "redis://127.0.0.1:" + port;
    }

    /**
     * {@link #url()} as a Locksmith lock URL with {@code params} and the restart hold-off off, for tests that are
     * not about restarts (a server just started would otherwise grant nothing for a lease time).
     *
     * @param params further query parameters joined by {@code &}, or empty
     * @return {@code redis://127.0.0.1:PORT?restartHoldOffMs=0[&params]}
     */
    public String url(String params) {
        return url() + "?restartHoldOffMs=0" + (params.isEmpty() ? "" : "&" + params);
    }

    /**
     * The server's address for Jedis.
     *
     * @return 127.0.0.1 and {@link #port()}
     */
    public HostAndPort hostAndPort() {
        return new HostAndPort("127.0.0.1", port);
    }

    /**
     * A plain connection for the test's own commands (INFO, CLIENT KILL, DEL), with a 5 s timeout and the password
     * if the server has one.
     *
     * @return a new connection, to be closed by the caller
     */
    public Jedis jedis() {
        return new Jedis(
                hostAndPort(),
                DefaultJedisClientConfig.builder()
                        .timeoutMillis(5_000)
                        .autoNegotiateProtocol(false)
                        .password(password)
                        .build());
    }

    /**
     * Kills the server (SIGKILL: nothing saved) and starts it again on the same port, empty; returns once it answers.
     *
     * @throws IllegalStateException if it does not start again
     */
    public void restart() {
        kill();
        try {
            startProcess();
        } catch (IOException e) {
            throw new IllegalStateException("Could not restart redis-server on port " + port, e);
        }
    }

    /**
     * Sends SIGSTOP: the server keeps its socket open but answers nothing, like a stalled host, until {@link
     * #resume()}.
     *
     * @throws IllegalStateException if the signal cannot be sent
     */
    public void pause() {
        signal("STOP");
    }

    /**
     * Sends SIGCONT after {@link #pause()}.
     *
     * @throws IllegalStateException if the signal cannot be sent
     */
    public void resume() {
        signal("CONT");
    }

    private void signal(String name) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).start();
            if (!kill.waitFor(5, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed");
            }
        } catch (IOException e) {
            throw new IllegalStateException("kill -" + name + " failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private void kill() {
        if (process != null && process.isAlive()) {
            resume(); // a stopped process cannot be reaped until continued
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Kills the server (SIGKILL, also when paused) and deletes its directory; idempotent. */
    @Override
    public void close() {
        kill();
        try (var files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException ignored) {
            // a temp directory left behind is harmless
        }
    }
}
