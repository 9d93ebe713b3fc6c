package org.locksmith.lock.tck.internal;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Stream;
import org.locksmith.lock.LockFeature;

/**
 * The TCK's machine-readable results: one JSON file per backend run ({@code <backend>--<TestClass>.json}) and the
 * markdown semantics table {@code semantics.md} regenerated from every JSON file in the directory, so that every
 * backend run in one build lands side by side. Hand-written JSON: the TCK adds no dependency for it.
 */
public final class TckResults {
    private TckResults() {}

    public static final String TABLE = "semantics.md";

    /** One test's outcome: status is passed, failed or skipped. */
    public record TestResult(String name, String status, String message, long millis, Map<String, String> notes) {}

    /** One TCK class run against one backend. */
    public record BackendRun(
            String backend,
            String testClass,
            Set<String> features,
            double timeFactor,
            String finishedAt,
            List<TestResult> tests) {}

    /**
     * A contract's verdict: {@code pass}, {@code fail}, {@code not declared} (reason: the feature), {@code
     * unverified} (reason: the missing hook, "needs ..."; a contract with a test skipped for a missing hook never
     * passes), {@code skipped} (every test inapplicable) or {@code not run}. {@code detail} is {@link #UNDECLARED_SIDE_CHECKED} when the
     * contract's feature is not declared and the tests of what must hold without it passed; empty otherwise.
     */
    public record Verdict(String status, String reason, String detail) {}

    /** The detail of a "not declared" verdict whose tests of the undeclared side ran and passed. */
    public static final String UNDECLARED_SIDE_CHECKED = "undeclared side checked";

    /**
     * Folds the tests of contract {@code id} ("c10") of a backend declaring {@code declared} (feature names; empty
     * if unknown). Any failure fails the contract. Otherwise, if the backend does not declare the contract's gating
     * feature ({@link Contracts#gate}), the contract is "not declared", even where the tests of the undeclared side
     * passed: a passing check that fencingToken() throws does not make a backend without fencing "pass" c10.
     * Otherwise a pass with no failure passes, and a contract whose tests were all skipped says why.
     */
    public static Verdict verdict(String id, List<TestResult> tests, Set<String> declared) {
        if (tests.isEmpty()) {
            return new Verdict("not run", "", "");
        }
        for (TestResult t : tests) {
            if (t.status().equals("failed")) {
                return new Verdict("fail", t.name() + ": " + t.message(), "");
            }
        }
        boolean anyPassed = tests.stream().anyMatch(t -> t.status().equals("passed"));
        Optional<LockFeature> gate = Contracts.gate(id);
        if (gate.isPresent() && !declares(declared, tests, gate.get())) {
            return new Verdict("not declared", gate.get().name(), anyPassed ? UNDECLARED_SIDE_CHECKED : "");
        }
        // A test skipped for a missing hook leaves the contract unproven, whatever the others did.
        for (TestResult t : tests) {
            if (needsHook(t)) {
                return new Verdict("unverified", t.message(), "");
            }
        }
        if (anyPassed) {
            return new Verdict("pass", "", "");
        }
        // All skipped: a missing hook says more than an undeclared sub-feature (DURABLE_FENCING in c10).
        for (TestResult t : tests) {
            if (!isNotDeclared(t)) {
                return new Verdict("skipped", t.message() == null ? "" : t.message(), "");
            }
        }
        TestResult first = tests.get(0);
        return new Verdict("not declared", first.message().substring(TckEnv.NOT_DECLARED.length()), "");
    }

    /**
     * Whether the backend declares {@code feature}: from the declared features when the run recorded them, else
     * from the skip reasons (a test skipped as "not declared: FEATURE").
     */
    private static boolean declares(Set<String> declared, List<TestResult> tests, LockFeature feature) {
        if (!declared.isEmpty()) {
            return declared.contains(feature.name());
        }
        return tests.stream()
                .noneMatch(t -> isNotDeclared(t) && t.message().equals(TckEnv.NOT_DECLARED + feature.name()));
    }

    private static boolean needsHook(TestResult t) {
        return t.status().equals("skipped")
                && t.message() != null
                && t.message().startsWith(TckEnv.NEEDS);
    }

    private static boolean isNotDeclared(TestResult t) {
        return t.status().equals("skipped")
                && t.message() != null
                && t.message().startsWith(TckEnv.NOT_DECLARED);
    }

    public static Map<String, List<TestResult>> byContract(List<TestResult> tests) {
        Map<String, List<TestResult>> map = new LinkedHashMap<>();
        for (int i = 1; i <= Contracts.NAMES.size(); i++) {
            map.put(Contracts.id(i), new ArrayList<>());
        }
        for (TestResult t : tests) {
            String id = Contracts.idOf(t.name());
            if (id != null) {
                map.get(id).add(t);
            }
        }
        return map;
    }

    /** The file locked while a result is written and the table rebuilt, so that builds in parallel take turns. */
    public static final String LOCK_FILE = ".semantics.lock";

    /** How long a writer waits for another JVM's turn before giving up (the report is then not written). */
    private static final long LOCK_WAIT_NANOS = TimeUnit.SECONDS.toNanos(30);

    /** File locks belong to the whole JVM: threads of one JVM take turns here first. */
    private static final ReentrantLock IN_THIS_JVM = new ReentrantLock();

    /**
     * Writes {@code run} as JSON and regenerates the table from all JSON files in {@code dir}. Safe when several
     * JVMs write into one directory at once (a parallel build, {@code mvn -T}): each file is written to a temporary
     * file and moved into place, so readers never see half a file, and the JSON write and the table rebuild happen
     * under a lock on {@value #LOCK_FILE}, so that the last table written lists every result written before it.
     *
     * @throws IOException if the directory cannot be written, or another JVM holds the lock for 30 s
     */
    public static void write(Path dir, BackendRun run) throws IOException {
        Files.createDirectories(dir);
        String file = safe(run.backend()) + "--" + safe(run.testClass()) + ".json";
        IN_THIS_JVM.lock();
        try (FileChannel channel =
                        FileChannel.open(dir.resolve(LOCK_FILE), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                FileLock ignored = lock(channel, dir)) {
            atomicWrite(dir.resolve(file), toJson(run));
            atomicWrite(dir.resolve(TABLE), table(readAll(dir)));
        } finally {
            IN_THIS_JVM.unlock();
        }
    }

    private static FileLock lock(FileChannel channel, Path dir) throws IOException {
        long deadline = System.nanoTime() + LOCK_WAIT_NANOS;
        while (true) {
            FileLock lock = channel.tryLock();
            if (lock != null) {
                return lock;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IOException("another JVM has held " + dir.resolve(LOCK_FILE) + " for 30 s");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
    }

    private static List<BackendRun> readAll(Path dir) throws IOException {
        List<BackendRun> runs = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p :
                    files.filter(f -> f.toString().endsWith(".json")).sorted().toList()) {
                try {
                    runs.add(fromJson(Files.readString(p, StandardCharsets.UTF_8)));
                } catch (RuntimeException e) {
                    System.err.println("[locksmith-tck] ignoring unreadable result " + p + ": " + e);
                }
            }
        }
        return runs;
    }

    private static void atomicWrite(Path target, String text) throws IOException {
        Path tmp = Files.createTempFile(target.getParent(), ".tmp-", ".part");
        Files.writeString(tmp, text, StandardCharsets.UTF_8);
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private static String safe(String s) {
        return s.replaceAll("[^A-Za-z0-9._-]", "_");
    }

    // ---- markdown -------------------------------------------------------------------------------------------

    public static String table(List<BackendRun> runs) {
        StringBuilder s = new StringBuilder();
        s.append("# Locksmith semantics, contract by contract\n\n");
        s.append("Generated by the Locksmith TCK from the JSON results next to this file. ");
        s.append("pass: the backend declares the contract's feature (if it has one) and every test of the contract ");
        s.append("that ran passed; FAIL: at least one test failed; not declared (FEATURE): the backend does not ");
        s.append("claim the contract's feature, so its tests were skipped (\"undeclared side checked\": the tests of ");
        s.append("what must hold without the feature ran and passed); unverified (needs ...): a test of the contract ");
        s.append("was skipped because the backend's TCK class lacks a hook (worker URL, fault, store view), so the ");
        s.append("contract is not proven; skipped: none of its tests applies.\n\n");
        Set<String> names = new TreeSet<>();
        List<String> headers = new ArrayList<>();
        for (BackendRun r : runs) {
            boolean dup =
                    runs.stream().filter(o -> o.backend().equals(r.backend())).count() > 1;
            String simple = r.testClass().substring(r.testClass().lastIndexOf('.') + 1);
            headers.add(dup ? r.backend() + " (" + simple + ")" : r.backend());
            names.add(r.backend());
        }
        s.append("| contract |");
        headers.forEach(h -> s.append(' ').append(cell(h)).append(" |"));
        s.append("\n|---|");
        headers.forEach(h -> s.append("---|"));
        s.append('\n');
        for (int i = 1; i <= Contracts.NAMES.size(); i++) {
            String id = Contracts.id(i);
            s.append("| ").append(id).append(' ').append(Contracts.name(id)).append(" |");
            for (BackendRun r : runs) {
                Verdict v = verdict(id, byContract(r.tests()).get(id), r.features());
                String text = switch (v.status()) {
                    case "pass" -> "pass";
                    case "fail" -> "**FAIL**";
                    case "not declared" ->
                        "not declared (" + shorten(v.reason()) + ")"
                                + (v.detail().isEmpty() ? "" : "; " + v.detail());
                    case "unverified" -> "unverified (" + shorten(v.reason()) + ")";
                    case "skipped" -> "skipped (" + shorten(v.reason()) + ")";
                    default -> v.status();
                };
                s.append(' ').append(cell(text)).append(" |");
            }
            s.append('\n');
        }
        s.append("| declared features |");
        runs.forEach(
                r -> s.append(' ').append(cell(String.join(", ", r.features()))).append(" |"));
        s.append("\n| tests passed / failed / skipped |");
        for (BackendRun r : runs) {
            long p = r.tests().stream().filter(t -> t.status().equals("passed")).count();
            long f = r.tests().stream().filter(t -> t.status().equals("failed")).count();
            long k =
                    r.tests().stream().filter(t -> t.status().equals("skipped")).count();
            s.append(' ')
                    .append(p)
                    .append(" / ")
                    .append(f)
                    .append(" / ")
                    .append(k)
                    .append(" |");
        }
        s.append("\n\n## Measurements\n\n");
        for (BackendRun r : runs) {
            boolean any = false;
            for (TestResult t : r.tests()) {
                for (Map.Entry<String, String> n : t.notes().entrySet()) {
                    if (!any) {
                        s.append("- ")
                                .append(r.backend())
                                .append(" (")
                                .append(r.testClass())
                                .append(")\n");
                        any = true;
                    }
                    s.append("  - ")
                            .append(n.getKey())
                            .append(": ")
                            .append(n.getValue())
                            .append('\n');
                }
            }
        }
        s.append("\n## Failures\n\n");
        for (BackendRun r : runs) {
            for (TestResult t : r.tests()) {
                if (t.status().equals("failed")) {
                    s.append("- ")
                            .append(r.backend())
                            .append(" ")
                            .append(t.name())
                            .append(": ")
                            .append(cell(shorten(t.message(), 400)))
                            .append('\n');
                }
            }
        }
        return s.toString();
    }

    private static String shorten(String s) {
        return shorten(s, 90);
    }

    private static String shorten(String s, int max) {
        if (s == null) {
            return "";
        }
        return s.length() > max ? s.substring(0, max - 3) + "..." : s;
    }

    private static String cell(String s) {
        return s.replace("|", "\\|").replace("\r", " ").replace("\n", " ");
    }

    // ---- JSON -----------------------------------------------------------------------------------------------

    public static String toJson(BackendRun r) {
        StringBuilder s = new StringBuilder("{\n");
        s.append("  \"backend\": ").append(str(r.backend())).append(",\n");
        s.append("  \"testClass\": ").append(str(r.testClass())).append(",\n");
        s.append("  \"features\": [");
        int i = 0;
        for (String f : r.features()) {
            s.append(i++ == 0 ? "" : ", ").append(str(f));
        }
        s.append("],\n");
        s.append("  \"timeFactor\": ").append(r.timeFactor()).append(",\n");
        s.append("  \"finishedAt\": ").append(str(r.finishedAt())).append(",\n");
        s.append("  \"contracts\": [\n");
        Map<String, List<TestResult>> grouped = byContract(r.tests());
        int c = 0;
        for (Map.Entry<String, List<TestResult>> e : grouped.entrySet()) {
            Verdict v = verdict(e.getKey(), e.getValue(), r.features());
            s.append(c++ == 0 ? "" : ",\n")
                    .append("    {\"id\": ")
                    .append(str(e.getKey()))
                    .append(", \"name\": ")
                    .append(str(Contracts.name(e.getKey())))
                    .append(", \"status\": ")
                    .append(str(v.status()))
                    .append(", \"reason\": ")
                    .append(str(v.reason()))
                    .append(", \"detail\": ")
                    .append(str(v.detail()))
                    .append('}');
        }
        s.append("\n  ],\n  \"tests\": [\n");
        int t = 0;
        for (TestResult test : r.tests()) {
            s.append(t++ == 0 ? "" : ",\n")
                    .append("    {\"name\": ")
                    .append(str(test.name()))
                    .append(", \"status\": ")
                    .append(str(test.status()))
                    .append(", \"millis\": ")
                    .append(test.millis())
                    .append(", \"message\": ")
                    .append(str(test.message()))
                    .append(", \"notes\": {");
            int n = 0;
            for (Map.Entry<String, String> note : test.notes().entrySet()) {
                s.append(n++ == 0 ? "" : ", ")
                        .append(str(note.getKey()))
                        .append(": ")
                        .append(str(note.getValue()));
            }
            s.append("}}");
        }
        s.append("\n  ]\n}\n");
        return s.toString();
    }

    private static String str(String v) {
        if (v == null) {
            return "null";
        }
        StringBuilder s = new StringBuilder("\"");
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            switch (c) {
                case '"' -> s.append("\\\"");
                case '\\' -> s.append("\\\\");
                case '\n' -> s.append("\\n");
                case '\r' -> s.append("\\r");
                case '\t' -> s.append("\\t");
                default -> {
                    if (c < 0x20) {
                        s.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        s.append(c);
                    }
                }
            }
        }
        return s.append('"').toString();
    }

    @SuppressWarnings("unchecked")
    public static BackendRun fromJson(String json) {
        Map<String, Object> m = (Map<String, Object>) new Json(json).value();
        List<TestResult> tests = new ArrayList<>();
        for (Object o : (List<Object>) m.get("tests")) {
            Map<String, Object> t = (Map<String, Object>) o;
            Map<String, String> notes = new LinkedHashMap<>();
            Object n = t.get("notes");
            if (n instanceof Map<?, ?> nm) {
                nm.forEach((k, v) -> notes.put(String.valueOf(k), String.valueOf(v)));
            }
            tests.add(new TestResult(
                    (String) t.get("name"),
                    (String) t.get("status"),
                    (String) t.get("message"),
                    ((Number) t.get("millis")).longValue(),
                    notes));
        }
        Set<String> features = new TreeSet<>();
        for (Object f : (List<Object>) m.get("features")) {
            features.add((String) f);
        }
        return new BackendRun(
                (String) m.get("backend"),
                (String) m.get("testClass"),
                features,
                ((Number) m.get("timeFactor")).doubleValue(),
                (String) m.get("finishedAt"),
                tests);
    }

    /** A minimal JSON reader for the files this class writes (objects, arrays, strings, numbers, literals). */
    private static final class Json {
        private final String s;
        private int i;

        Json(String s) {
            this.s = s;
        }

        Object value() {
            skip();
            char c = s.charAt(i);
            switch (c) {
                case '{' -> {
                    i++;
                    Map<String, Object> m = new LinkedHashMap<>();
                    skip();
                    if (s.charAt(i) == '}') {
                        i++;
                        return m;
                    }
                    while (true) {
                        skip();
                        String k = string();
                        skip();
                        expect(':');
                        m.put(k, value());
                        skip();
                        if (s.charAt(i) == ',') {
                            i++;
                        } else {
                            expect('}');
                            return m;
                        }
                    }
                }
                case '[' -> {
                    i++;
                    List<Object> l = new ArrayList<>();
                    skip();
                    if (s.charAt(i) == ']') {
                        i++;
                        return l;
                    }
                    while (true) {
                        l.add(value());
                        skip();
                        if (s.charAt(i) == ',') {
                            i++;
                        } else {
                            expect(']');
                            return l;
                        }
                    }
                }
                case '"' -> {
                    return string();
                }
                default -> {
                    int start = i;
                    while (i < s.length() && ",}] \n\r\t".indexOf(s.charAt(i)) < 0) {
                        i++;
                    }
                    String word = s.substring(start, i);
                    return switch (word) {
                        case "null" -> null;
                        case "true" -> Boolean.TRUE;
                        case "false" -> Boolean.FALSE;
                        default -> Double.parseDouble(word);
                    };
                }
            }
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (true) {
                char c = s.charAt(i++);
                if (c == '"') {
                    return b.toString();
                }
                if (c == '\\') {
                    char e = s.charAt(i++);
                    switch (e) {
                        case 'n' -> b.append('\n');
                        case 'r' -> b.append('\r');
                        case 't' -> b.append('\t');
                        case 'b' -> b.append('\b');
                        case 'f' -> b.append('\f');
                        case 'u' -> {
                            b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                            i += 4;
                        }
                        default -> b.append(e);
                    }
                } else {
                    b.append(c);
                }
            }
        }

        private void expect(char c) {
            if (s.charAt(i) != c) {
                throw new IllegalArgumentException("expected '" + c + "' at " + i);
            }
            i++;
        }

        private void skip() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
        }
    }
}
