package org.locksmith.lock.cli.internal;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The command of {@code locksmith run} and every process it starts: stopping the command must stop its children
 * too (a shell script's {@code sleep}, a build's compilers), or they would go on working without the lock.
 *
 * <p>Where {@code setsid(1)} is installed (util-linux: every Linux distribution), the command is started through it,
 * so it leads a new session and process group whose id is its pid, and a signal goes to that whole group with
 * {@code kill -s SIG -- -PGID}. The command then has no controlling terminal (it keeps the inherited stdin, stdout
 * and stderr); a terminal's Ctrl-C reaches it through locksmith, which forwards it. Without {@code setsid} (macOS,
 * BSD) the command stays in locksmith's process group and a signal goes to the command and to the descendants it
 * has at that moment; a descendant that has left the command's tree by then (a daemon that double-forked) is not
 * reached.
 *
 * <p>The JDK has no call that signals a process group or sends SIGINT, so signals are sent with {@code kill(1)}.
 */
public final class ProcessGroup {
    private static final Optional<String> SETSID = executable("setsid");
    private static final String KILL = executable("kill").orElse("kill");

    private final Process leader;
    private final boolean grouped;

    private ProcessGroup(Process leader, boolean grouped) {
        this.leader = leader;
        this.grouped = grouped;
    }

    /** Starts {@code pb}'s command in a process group of its own where the system allows it. */
    public static ProcessGroup start(ProcessBuilder pb) throws IOException {
        if (SETSID.isEmpty()) {
            return new ProcessGroup(pb.start(), false);
        }
        List<String> command = new ArrayList<>(pb.command());
        List<String> wrapped = new ArrayList<>(command.size() + 1);
        wrapped.add(SETSID.get());
        wrapped.addAll(command);
        // A command setsid cannot run would otherwise exit 127/126 from setsid as if the command had run and failed:
        // find it first, with the rules of execvp, so that "cannot run" is reported the same way with or without it.
        requireRunnable(command.get(0), pb.directory(), pb.environment().get("PATH"));
        pb.command(wrapped);
        try {
            // setsid(1) calls setsid(2) and execs the command in place (it forks only when it is a group leader,
            // which a fresh child of the JVM never is): the pid is the command's, and the group's id.
            return new ProcessGroup(pb.start(), true);
        } finally {
            pb.command(command);
        }
    }

    /** The command itself. */
    public Process leader() {
        return leader;
    }

    /** Whether the command leads a process group of its own (started through setsid). */
    public boolean grouped() {
        return grouped;
    }

    /**
     * Sends {@code signal} ({@code INT}, {@code TERM}, {@code KILL}) to the command and the processes it started.
     * Blocks for the few milliseconds {@code kill(1)} takes; call it where blocking is allowed.
     */
    public void signal(String signal) {
        List<String> cmd = new ArrayList<>(List.of(KILL, "-s", signal, "--"));
        if (grouped) {
            cmd.add("-" + leader.pid());
        } else {
            List<ProcessHandle> all = new ArrayList<>();
            all.add(leader.toHandle());
            leader.toHandle().descendants().forEach(all::add);
            all.stream().filter(ProcessHandle::isAlive).forEach(p -> cmd.add(Long.toString(p.pid())));
            if (cmd.size() == 4) {
                return;
            }
        }
        if (run(cmd) != 0 && signal.equals("KILL") && leader.isAlive()) {
            leader.destroyForcibly(); // kill(1) itself failed: at least the command must end
        }
    }

    /** Whether the command or any process of its group is still running. */
    public boolean anyAlive() {
        if (leader.isAlive()) {
            return true;
        }
        if (!grouped) {
            return leader.toHandle().descendants().anyMatch(ProcessHandle::isAlive);
        }
        return run(List.of(KILL, "-s", "0", "--", "-" + leader.pid())) == 0;
    }

    private static int run(List<String> cmd) {
        try {
            Process p = new ProcessBuilder(cmd)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            if (!p.waitFor(5, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return -1;
            }
            return p.exitValue();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private static Optional<String> executable(String name) {
        String path = System.getenv("PATH");
        List<String> dirs = new ArrayList<>(List.of("/usr/bin", "/bin", "/usr/sbin", "/sbin"));
        if (path != null) {
            dirs.addAll(0, List.of(path.split(File.pathSeparator)));
        }
        for (String dir : dirs) {
            if (dir.isEmpty()) {
                continue;
            }
            Path p = Path.of(dir, name);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return Optional.of(p.toString());
            }
        }
        return Optional.empty();
    }

    private static void requireRunnable(String program, File directory, String path) throws IOException {
        if (program.contains("/")) {
            Path p = directory == null || Path.of(program).isAbsolute()
                    ? Path.of(program)
                    : directory.toPath().resolve(program);
            if (!Files.isRegularFile(p)) {
                throw new IOException("No such file or directory");
            }
            if (!Files.isExecutable(p)) {
                throw new IOException("Permission denied");
            }
            return;
        }
        boolean found = false;
        for (String dir : (path == null ? "/usr/bin:/bin" : path).split(File.pathSeparator)) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, program);
            if (Files.isRegularFile(p)) {
                found = true;
                if (Files.isExecutable(p)) {
                    return;
                }
            }
        }
        throw new IOException(found ? "Permission denied" : "No such file or directory");
    }
}
