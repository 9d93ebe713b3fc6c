package org.locksmith.lock.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.cli.internal.TckRun;
import org.locksmith.lock.cli.internal.TckTarget;
import org.locksmith.lock.cli.internal.TempDirs;
import org.locksmith.lock.spi.LockUrl;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code locksmith check}: the TCK's contracts against a live deployment. */
@Command(
        name = "check",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Run the Locksmith TCK against a live lock store: every contract that needs no fault injection (mutual"
                    + " exclusion across threads, clients and processes, progress and hand-off latency, reentrancy,"
                    + " ownership, deadlines, interruption, lease expiry and renewal, fencing, fairness, close, keys),"
                    + " as far as the backend declares the features. Shows a progress bar, then the contract table.",
            "A contract with a test that needs a fault hook (killing sessions, restarting or stopping the store,"
                    + " deleting state) reads 'unverified (needs ...)', never pass: run the backend's own test suite"
                    + " for those.",
            "Where the URL sets no leaseMs / sessionTimeoutMs, short ones are used so the run takes minutes, not"
                    + " hours. Test keys get a random prefix; nothing else in the store is touched."
        },
        footerHeading = "%nExit status:%n",
        footer = {
            "    0  every contract that ran passed",
            "    1  at least one contract failed (listed after the table), or every selected test was skipped",
            "   64  usage error (malformed URL, unknown parameter, bad --tests pattern)",
            "   69  the lock store is unreachable",
            "   70  internal error (please report it with the --verbose output)",
            "",
            "Examples:",
            "  locksmith check --url redis://127.0.0.1:6379",
            "  locksmith check --url 'mysql://locks:secret@db:3306/app?strategy=lease&leaseMs=10000'",
            "  locksmith check --url zookeeper://zk1:2181,zk2:2181,zk3:2181 --tests 'c0[1-5].*'"
        })
final class CheckCommand implements Callable<Integer> {

    @Option(
            names = "--url",
            defaultValue = "${env:LOCKSMITH_URL}",
            paramLabel = "URL",
            description = "The lock store to check, as given to `locksmith run`. Default: the environment variable"
                    + " LOCKSMITH_URL.")
    String url;

    @Option(
            names = "--tests",
            defaultValue = ".*",
            paramLabel = "REGEX",
            description =
                    "Only the TCK tests whose name matches (for example 'c10.*' or '.*fencing.*')." + " Default: all.")
    String tests;

    @Option(
            names = "--report-dir",
            paramLabel = "DIR",
            description = "Keep the TCK's JSON result and semantics.md in DIR (default: a temporary directory,"
                    + " deleted).")
    Path reportDir;

    @Option(
            names = "--time-factor",
            paramLabel = "F",
            description = "Stretch the TCK's time allowances (hand-off, deadline overshoot, interrupt latency) by F,"
                    + " 1 to 100, for a busy or slow machine. Default: LOCKSMITH_TCK_TIME_FACTOR, else 1.")
    Double timeFactor;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (url == null || url.isBlank()) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "no lock store given: use --url URL or set LOCKSMITH_URL");
        }
        TimeFactor.apply(timeFactor);
        Pattern selection;
        try {
            selection = Pattern.compile(tests);
        } catch (PatternSyntaxException e) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--tests '" + tests + "' is not a regular expression: " + e.getDescription());
        }
        String shown;
        try {
            shown = LockUrl.parse(url.trim()).toString();
        } catch (IllegalArgumentException e) {
            throw Main.usage(spec.commandLine(), e);
        }
        out.println("Checking " + shown);
        out.flush();
        TckTarget target = TckTarget.of(url.trim(), out);
        try (LockClient probe = Main.openStore(spec.commandLine(), target.url())) {
            out.println("  backend " + probe.backend() + ", declares "
                    + String.join(
                            ", ",
                            new TreeSet<>(
                                    probe.features().stream().map(Enum::name).toList())));
        }
        out.flush();
        Path dir = reportDir != null ? Files.createDirectories(reportDir) : TempDirs.create("locksmith-check");
        try {
            long t0 = System.nanoTime();
            List<TckRun.Outcome> outcomes = new TckRun(target.url(), dir, selection)
                    .timings(target.lease(), target.session(), target.operation())
                    .execute(err, "check");
            if (outcomes.isEmpty()) {
                throw new CommandLine.ParameterException(
                        spec.commandLine(), "--tests '" + tests + "' matches no TCK test (they are named c01_...)");
            }
            long failed =
                    outcomes.stream().filter(o -> o.status().equals("failed")).count();
            long passed =
                    outcomes.stream().filter(o -> o.status().equals("passed")).count();
            out.println();
            out.println(TckRun.table(dir));
            String measured = TckRun.measurements(dir);
            if (!measured.isEmpty()) {
                out.println();
                out.println("Measurements:");
                out.println(measured);
            }
            if (failed > 0) {
                out.println();
                out.println("Failures:");
                outcomes.stream()
                        .filter(o -> o.status().equals("failed"))
                        .forEach(o -> out.println("  " + o.test() + ": " + o.message()));
            }
            out.println();
            out.printf(
                    Locale.ROOT,
                    "%d passed, %d failed, %d skipped in %.1f s%s%n",
                    passed,
                    failed,
                    outcomes.size() - passed - failed,
                    (System.nanoTime() - t0) / 1e9,
                    reportDir != null ? "; results in " + dir : "");
            out.flush();
            if (failed == 0 && passed == 0) {
                // Nothing was proved: a green status here would tell a script the deployment was checked.
                out.println("Nothing was checked: every selected test was skipped (see the reasons above).");
                out.flush();
                return ExitStatus.CHECK_FAILED;
            }
            return failed > 0 ? ExitStatus.CHECK_FAILED : ExitStatus.OK;
        } finally {
            if (reportDir == null) {
                TempDirs.delete(dir);
            }
        }
    }
}
