package org.locksmith.lock.cli.internal;

import java.io.PrintWriter;
import java.util.Locale;

/**
 * A progress bar for TCK runs. On a terminal it redraws one line ({@code \r}) and prints failures above it; when the
 * output is a file or a pipe (CI logs) it prints one line per finished test instead.
 */
final class Progress {
    private static final int WIDTH = 30;

    private final PrintWriter out;
    private final String label;
    private final boolean terminal = isTerminal();
    private long total;
    private int done;
    private int failed;
    private String current = "";

    Progress(PrintWriter out, String label) {
        this.out = out;
        this.label = label;
    }

    synchronized void start(long tests) {
        total = tests;
        draw();
    }

    synchronized void running(String test) {
        current = test;
        draw();
    }

    synchronized void finished(TckRun.Outcome o) {
        done++;
        if (o.status().equals("failed")) {
            failed++;
        }
        if (terminal) {
            if (o.status().equals("failed")) {
                out.print("\r\033[K");
                out.println("  FAIL " + o.test() + ": " + oneLine(o.message()));
            }
            draw();
        } else {
            out.printf(
                    Locale.ROOT,
                    "  %s [%s] %2d/%d %-7s %s (%d ms)%n",
                    label,
                    bar(),
                    done,
                    total,
                    o.status(),
                    o.test(),
                    o.millis());
            if (o.status().equals("failed")) {
                out.println("      " + oneLine(o.message()));
            }
            out.flush();
        }
    }

    synchronized void end() {
        if (terminal) {
            current = failed == 0 ? "done" : failed + " failed";
            draw();
            out.println();
        }
        out.flush();
    }

    private void draw() {
        if (!terminal) {
            return;
        }
        String name = current.length() > 48 ? current.substring(0, 45) + "..." : current;
        out.print("\r\033[K  " + label + " [" + bar() + "] " + done + "/" + total + "  " + name);
        out.flush();
    }

    private String bar() {
        int filled = total == 0 ? 0 : (int) (WIDTH * done / total);
        return "#".repeat(filled) + ".".repeat(WIDTH - filled);
    }

    /**
     * Whether the output is an interactive terminal. From JDK 22 on, {@link System#console()} is non-null even when
     * the output is redirected, and {@code Console.isTerminal()} (absent on 17) tells the difference.
     */
    private static boolean isTerminal() {
        java.io.Console console = System.console();
        String term = System.getenv("TERM");
        if (console == null || term == null || term.equals("dumb")) {
            return false;
        }
        try {
            return (Boolean) java.io.Console.class.getMethod("isTerminal").invoke(console);
        } catch (ReflectiveOperationException e) {
            return true; // JDK 17-21: a console exists only for a terminal
        }
    }

    private static String oneLine(String s) {
        if (s == null) {
            return "";
        }
        String t = s.replace('\n', ' ').replace('\r', ' ');
        return t.length() > 300 ? t.substring(0, 297) + "..." : t;
    }
}
