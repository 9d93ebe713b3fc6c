package org.locksmith.lock.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;
import org.locksmith.lock.DistributedLock;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockLostException;
import org.locksmith.lock.Locks;
import org.locksmith.lock.cli.internal.Durations;
import org.locksmith.lock.cli.internal.LockUrls;
import org.locksmith.lock.cli.internal.Supervisor;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code locksmith run}: runs a command while holding a distributed lock, a cross-machine {@code flock(1)}. */
@Command(
        name = "run",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Run COMMAND while holding the distributed lock KEY: among all machines using the same lock store, at"
                    + " most one runs a command under KEY at a time. For cron jobs on several nodes.",
            "The command inherits stdin, stdout, stderr and the environment, plus LOCKSMITH_KEY and, where the"
                    + " backend issues them, LOCKSMITH_FENCING_TOKEN (strictly greater for every new grant of KEY:"
                    + " hand it to what the command writes to, so a holder that lost the lock can be refused).",
            "The command runs in a process group of its own (through setsid(1) where installed). SIGINT and"
                    + " SIGTERM to locksmith are forwarded to that whole group as the same signal (SIGKILL to what"
                    + " still runs after --grace); the lock is released once the command has ended."
        },
        footerHeading = "%nExit status:%n",
        footer = {
            "  the command's own status when it ran under the lock and the lock held to its end",
            "   64  usage error: unknown option, bad duration, malformed URL, unknown URL parameter or bad key",
            "   69  the lock store is unreachable or failed",
            "   70  internal error (please report it with the --verbose output)",
            "   75  the lock was not granted within --wait; the command did not run",
            "   76  the lock was lost while the command ran; the command's group was terminated (SIGTERM, then"
                    + " SIGKILL)",
            "  127  the command could not be started",
            "  130  / 143: locksmith got SIGINT / SIGTERM (128 + signal number)",
            "",
            "Examples:",
            "  # only one node of the cluster refreshes; the others skip this round (status 75)",
            "  locksmith run --url redis://10.0.0.5:6379 --key nightly-refresh --wait 0 -- ./refresh.sh",
            "  # wait up to 2 minutes for the previous run to finish",
            "  locksmith run --url mysql://cron:secret@db:3306/ops --key reports --wait 2m -- make reports",
            "  # the URL from the environment; a 1 minute lease renewed while the command runs",
            "  LOCKSMITH_URL=redis://10.0.0.5:6379 locksmith run --key import --lease 1m -- sh -c 'import.sh \"$LOCKSMITH_FENCING_TOKEN\"'",
            "  # crontab line",
            "  */5 * * * * locksmith run --url zookeeper://zk1:2181,zk2:2181 --key sync --wait 0 -- /opt/sync || [ $? -eq 75 ]"
        })
final class RunCommand implements Callable<Integer> {

    @Option(
            names = "--url",
            defaultValue = "${env:LOCKSMITH_URL}",
            paramLabel = "URL",
            description =
                    "Lock store URL: redis://host:6379, zookeeper://host:2181[,host2:2181], mysql://user:password@host:3306/db"
                            + " (with ?name=value parameters of the backend). Default: the environment variable LOCKSMITH_URL.")
    String url;

    @Option(
            names = "--key",
            required = true,
            paramLabel = "KEY",
            description = "The lock's name: any text of 1 to 1024 characters.")
    String key;

    @Option(
            names = "--wait",
            defaultValue = "10s",
            paramLabel = "DURATION",
            converter = Durations.class,
            description =
                    "How long to wait for the lock (500ms, 10s, 2m, 1h); 0 tries once. Default: ${DEFAULT-VALUE}.")
    Duration wait;

    @Option(
            names = "--lease",
            paramLabel = "DURATION",
            converter = Durations.class,
            description = "How long the store keeps the lock if locksmith dies without releasing it (renewed while"
                    + " the command runs). Backends with leases only (redis, mysql ?strategy=lease); ZooKeeper and"
                    + " mysql's row and named strategies bind the lock to the connection instead. Default: the URL's"
                    + " leaseMs, else the backend's default.")
    Duration lease;

    @Option(
            names = "--grace",
            defaultValue = "10s",
            paramLabel = "DURATION",
            converter = Durations.class,
            description = "After the first signal to the command's process group (SIGTERM when the lock is lost,"
                    + " else the signal locksmith got), how long before SIGKILL. Default: ${DEFAULT-VALUE}.")
    Duration grace;

    @Parameters(
            arity = "1..*",
            paramLabel = "COMMAND",
            description = "The command and its arguments (put them after --).")
    List<String> command;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @CommandLine.ParentCommand
    Main main;

    @Override
    public Integer call() throws Exception {
        PrintWriter err = spec.commandLine().getErr();
        String lockUrl = url == null ? "" : url.trim();
        if (lockUrl.isEmpty()) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "no lock store given: use --url URL or set LOCKSMITH_URL");
        }
        if (lease != null) {
            lockUrl = withLease(lockUrl, lease);
        }
        if (key.isEmpty() || key.length() > Locks.MAX_KEY_LENGTH) {
            // Before the store is opened: a bad key is the user's input even when the store is down.
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "--key must be 1 to " + Locks.MAX_KEY_LENGTH + " characters long, not " + key.length());
        }
        LockClient client = Main.openStore(spec.commandLine(), lockUrl);
        // From here on a signal must not end the JVM before the lock is released and the command stopped.
        Supervisor supervisor = new Supervisor(grace);
        supervisor.closeOnExit(client);
        supervisor.installSignalHandlers();
        try {
            if (lease != null && !client.features().contains(LockFeature.LEASE_EXPIRY)) {
                err.println("locksmith: --lease does not apply to " + client.backend()
                        + ": its locks are bound to locksmith's session with the store (freed when it ends),"
                        + " not to a lease");
                err.flush();
            }
            DistributedLock lock;
            try {
                lock = client.lock(key);
            } catch (IllegalArgumentException e) {
                throw Main.usage(spec.commandLine(), e); // the core's other key rules (no I/O)
            }
            Optional<LockLease> granted;
            try {
                // Duration.ZERO, not tryAcquire(): one attempt that, like the wait, ends with InterruptedException
                // when a signal interrupts it (tryAcquire() ignores interruption by contract, and a store client
                // interrupted in it has nowhere to report it).
                granted = lock.tryAcquire(Duration.ZERO);
                if (granted.isEmpty() && !wait.isZero()) {
                    if (main.verbose) {
                        err.println("locksmith: lock '" + key + "' is held elsewhere; waiting up to "
                                + Durations.format(wait));
                        err.flush();
                    }
                    granted = lock.tryAcquire(wait);
                }
            } catch (InterruptedException e) {
                // Only a signal interrupts this thread; the core leaves nothing held or queued after it.
                return supervisor.signalStatus();
            }
            if (granted.isEmpty()) {
                if (supervisor.signalled()) {
                    return supervisor.signalStatus();
                }
                err.println("locksmith: lock '" + key + "' not granted "
                        + (wait.isZero() ? "at once (--wait 0)" : "within " + Durations.format(wait))
                        + ": another holder has it; the command did not run");
                err.flush();
                return ExitStatus.NOT_GRANTED;
            }
            return runHolding(client, granted.get(), err, supervisor);
        } finally {
            Thread.interrupted(); // a signal's interrupt must not cut short the release that closing does
            client.close();
        }
    }

    private int runHolding(LockClient client, LockLease lease, PrintWriter err, Supervisor supervisor) {
        ProcessBuilder pb = new ProcessBuilder(command).inheritIO();
        pb.environment().put("LOCKSMITH_KEY", key);
        if (client.features().contains(LockFeature.FENCING)) {
            pb.environment().put("LOCKSMITH_FENCING_TOKEN", Long.toString(lease.fencingToken()));
        }
        AtomicReference<LockLostException> lost = new AtomicReference<>();
        boolean detectsLoss = client.features().contains(LockFeature.LOSS_DETECTION);
        if (detectsLoss) {
            // Before the command starts, so that a loss between the grant and the start is not missed: the listener
            // runs at once if the lease is lost already, and start() then refuses to start the command.
            // Listeners must not block: terminate() only records the request and hands the signalling to a thread.
            lease.onLost(e -> {
                lost.compareAndSet(null, e);
                supervisor.terminate();
            });
        } else {
            err.println("locksmith: " + client.backend() + " does not report a lost lock while the command runs;"
                    + " locksmith finds a loss only when the command has ended (status 76)");
            err.flush();
        }
        Process child;
        try {
            child = supervisor.start(pb);
        } catch (IOException e) {
            release(lease);
            err.println("locksmith: cannot run '" + command.get(0) + "': " + e.getMessage());
            err.flush();
            return ExitStatus.COMMAND_NOT_STARTED;
        }
        if (child == null) { // a signal, or the loss of the lock, came before the command started
            release(lease);
            if (supervisor.signalled()) {
                return supervisor.signalStatus();
            }
            LockLostException e = lost.get();
            if (e == null) {
                return ExitStatus.SOFTWARE; // the JVM is ending (SIGHUP): its shutdown hook refused the start
            }
            err.println("locksmith: lost the lock '" + key + "' before the command started (" + Main.describe(e)
                    + "); the command did not run");
            err.flush();
            return ExitStatus.LOCK_LOST;
        }
        int status = supervisor.awaitChild();
        if (lost.get() == null && !lease.isValid()) {
            // Without loss detection this is where a loss shows; with it, a loss the listener has not reported yet.
            lost.compareAndSet(
                    null,
                    new LockLostException(
                            "the lock '" + key + "' could no longer be proved held when the command ended"));
        }
        if (lost.get() == null) {
            try {
                lease.release();
            } catch (LockLostException e) {
                lost.compareAndSet(null, e);
            } catch (LockBackendException e) {
                err.println("locksmith: could not tell the store to release '" + key + "' (" + Main.describe(e)
                        + "); it frees the lock by itself when the lease or session ends");
            }
        } else {
            release(lease);
        }
        if (supervisor.signalled()) {
            err.flush();
            return supervisor.signalStatus();
        }
        LockLostException e = lost.get();
        if (e != null) {
            err.println("locksmith: lost the lock '" + key + "' while the command ran (" + Main.describe(e) + "); "
                    + (supervisor.terminated()
                            ? "the command was terminated (exit status " + status + ")"
                            : "the command had finished (exit status " + status + ") but its work was not protected"));
            err.flush();
            return ExitStatus.LOCK_LOST;
        }
        err.flush();
        return status;
    }

    /** Releases a lease whose outcome no longer changes the exit status; the store frees it by itself otherwise. */
    private static void release(LockLease lease) {
        try {
            if (lease.holdCount() > 0) {
                lease.release();
            }
        } catch (LockLostException | LockBackendException e) {
            // The status already says what happened; the store frees the lock when the lease or session ends.
        }
    }

    private String withLease(String lockUrl, Duration leaseTime) {
        if (leaseTime.isZero()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--lease must be longer than 0");
        }
        if (!LockUrls.understands(lockUrl, "leaseMs")) {
            return lockUrl; // reported after open, in one line, once the backend is known
        }
        if (LockUrls.parameter(lockUrl, "leaseMs").isPresent()) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--lease and the URL's leaseMs both set the lease: give only one");
        }
        return LockUrls.with(lockUrl, "leaseMs", Long.toString(leaseTime.toMillis()));
    }
}
