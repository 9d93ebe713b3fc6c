package org.locksmith.lock.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.logging.Handler;
import java.util.logging.Level;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.LockTimeoutException;
import org.locksmith.lock.Locks;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The {@code locksmith} command: {@code run} (a cross-machine {@code flock(1)}), {@code demo} (contending worker
 * processes on an in-process ZooKeeper, then the semantics table of every reachable backend) and {@code check} (the
 * TCK against a live deployment). Exit statuses are listed in {@link ExitStatus}.
 *
 * <p>Errors are reported in one line on stderr, {@code locksmith: <what went wrong>}, with a non-zero status; the
 * stack trace only with {@code --verbose}.
 */
@Command(
        name = "locksmith",
        mixinStandardHelpOptions = true,
        version = "locksmith 0.1.0-SNAPSHOT",
        description = "Distributed locks from the command line: run a job under a lock, see the backends side by side,"
                + " check a deployment.",
        subcommands = {RunCommand.class, DemoCommand.class, CheckCommand.class, CommandLine.HelpCommand.class},
        footerHeading = "%nExamples:%n",
        footer = {
            "  locksmith demo",
            "  locksmith run --url redis://10.0.0.5:6379 --key nightly-refresh --wait 0 -- ./refresh.sh",
            "  LOCKSMITH_URL=zookeeper://zk1:2181,zk2:2181 locksmith run --key reports -- make reports",
            "  locksmith check --url mysql://locks:secret@db:3306/app",
            "",
            "Exit statuses: 0 ok (run: the command's own status), 1 check found a failure, 64 usage error,"
                    + " 69 lock store unreachable, 70 internal error, 75 lock not granted within --wait,"
                    + " 76 lock lost while the command ran, 127 command not found, 128+N killed by signal N."
        })
public final class Main implements Callable<Integer> {

    @Option(
            names = "--verbose",
            scope = CommandLine.ScopeType.INHERIT,
            description = "Show stack traces and the backends' logs.")
    boolean verbose;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** Runs the command and exits with its status. */
    public static void main(String[] args) {
        System.exit(execute(args));
    }

    /** Runs the command and returns its exit status (without exiting). */
    public static int execute(String... args) {
        Main main = new Main();
        CommandLine cl = new CommandLine(main);
        // Help as wide as the terminal (picocli asks the terminal when there is one); 80 columns otherwise.
        cl.setUsageHelpAutoWidth(true);
        // Everything after the command of `run` belongs to it, even what looks like an option (`ls -l`).
        cl.getSubcommands().get("run").setStopAtPositional(true);
        cl.setExecutionStrategy(parsed -> {
            configureLogging(main.verbose);
            return new CommandLine.RunLast().execute(parsed);
        });
        cl.setParameterExceptionHandler((e, a) -> {
            PrintWriter err = e.getCommandLine().getErr();
            String name = e.getCommandLine().getCommandSpec().qualifiedName();
            err.println("locksmith: " + e.getMessage() + " (see '" + name + " --help')");
            err.flush();
            return ExitStatus.USAGE;
        });
        cl.setExecutionExceptionHandler((e, c, parsed) -> {
            PrintWriter err = c.getErr();
            if (main.verbose) {
                e.printStackTrace(err);
            }
            err.println("locksmith: " + describe(e));
            err.flush();
            return statusOf(e);
        });
        return cl.execute(args);
    }

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        return ExitStatus.USAGE;
    }

    /** The exit status for an exception that ended a command. */
    static int statusOf(Throwable e) {
        if (e instanceof LockBackendException) {
            return ExitStatus.STORE_UNAVAILABLE;
        }
        if (e instanceof LockLostException) {
            return ExitStatus.LOCK_LOST;
        }
        if (e instanceof LockTimeoutException) {
            return ExitStatus.NOT_GRANTED;
        }
        if (e instanceof CommandLine.ParameterException) {
            return ExitStatus.USAGE;
        }
        // Bad input is turned into a ParameterException where it is read (openStore, the key): an
        // IllegalArgumentException or IllegalStateException that gets here came from the store or from locksmith.
        return ExitStatus.SOFTWARE;
    }

    /**
     * Opens the lock store at {@code url}. The provider rejects a malformed URL or setting with an {@link
     * IllegalArgumentException} before any I/O (the SPI's contract): that is the user's input, status 64; a store that
     * cannot be reached is a {@link LockBackendException}, status 69.
     *
     * @throws CommandLine.ParameterException if the URL or one of its settings is invalid
     */
    static LockClient openStore(CommandLine cl, String url) {
        try {
            return Locks.open(url);
        } catch (IllegalArgumentException e) {
            throw usage(cl, e);
        }
    }

    /** The user's input was rejected: a usage error (64) with the rejection's message. */
    static CommandLine.ParameterException usage(CommandLine cl, IllegalArgumentException e) {
        return new CommandLine.ParameterException(cl, message(e), e);
    }

    /** One line: the message, with the causes' messages where they add something. */
    static String describe(Throwable e) {
        StringBuilder s = new StringBuilder(message(e));
        if (e instanceof LockBackendException) {
            s.insert(0, "lock store unavailable: ");
        } else if (statusOf(e) == ExitStatus.SOFTWARE) {
            s.insert(0, "internal error (" + e.getClass().getName() + "; rerun with --verbose): ");
        }
        Throwable seen = e;
        for (Throwable c = e.getCause(); c != null && c != seen; seen = c, c = c.getCause()) {
            String m = message(c);
            if (!s.toString().contains(m)) {
                s.append(": ").append(m);
            }
        }
        return s.toString().replace('\n', ' ').replace('\r', ' ');
    }

    private static String message(Throwable e) {
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }

    /**
     * Backend logs on stderr only with {@code --verbose}: errors are locksmith's one line. Two logging systems are
     * in play: SLF4J (ZooKeeper, Curator, HikariCP, Jedis), bound to SLF4J Simple, which reads its settings when the
     * first logger is made, so this runs before any backend class is touched; and {@code java.util.logging}, where
     * the core's and the backends' {@code System.Logger} messages go (the JDK's default console handler prints INFO
     * and above on stderr).
     */
    static void configureLogging(boolean verbose) {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", verbose ? "info" : "off");
        }
        System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
        if (!verbose && System.getProperty("java.util.logging.config.file") == null) {
            java.util.logging.Logger root = java.util.logging.Logger.getLogger("");
            root.setLevel(Level.OFF);
            for (Handler h : root.getHandlers()) {
                h.setLevel(Level.OFF);
            }
        }
    }
}
