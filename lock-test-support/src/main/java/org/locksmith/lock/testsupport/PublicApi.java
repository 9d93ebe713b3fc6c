package org.locksmith.lock.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The public API of a module's packages as text, one line per public type and per public or protected member, and a
 * check of it against a baseline file kept in the repository. A change to the API or SPI then shows up in review as
 * a change to that file, made on purpose ({@code -Dlocksmith.api.update=true} rewrites it), never by accident.
 *
 * <p>This is the role japicmp plays against a released jar; until a first release exists there is no jar to compare
 * with, and a reviewed text file says the same in the pull request itself.
 */
public final class PublicApi {
    /** The system property that rewrites the baseline instead of comparing with it. */
    public static final String UPDATE_PROPERTY = "locksmith.api.update";

    private PublicApi() {}

    /**
     * {@link #check(Path, ClassLoader, Path, String...)} for the module whose classes directory holds {@code
     * member}, with its baseline at {@code api/public-api.txt} under the working directory (the module's, when
     * Surefire runs its tests).
     */
    public static void checkModuleOf(Class<?> member, String... packages) {
        Path classes;
        try {
            classes = Path.of(
                    member.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
        check(classes, member.getClassLoader(), Path.of("api", "public-api.txt"), packages);
    }

    /**
     * Compares the public API of {@code packages} (not their sub-packages), found as class files under {@code
     * classes} and loaded by {@code loader}, with {@code baseline}; rewrites the baseline instead when {@value
     * #UPDATE_PROPERTY} is true.
     *
     * @throws AssertionError naming every line added or removed, and how to accept the change
     */
    public static void check(Path classes, ClassLoader loader, Path baseline, String... packages) {
        List<String> current = describe(classes, loader, packages);
        try {
            if (Boolean.getBoolean(UPDATE_PROPERTY)) {
                Files.createDirectories(baseline.toAbsolutePath().getParent());
                Files.write(baseline, current, StandardCharsets.UTF_8);
                return;
            }
            if (!Files.exists(baseline)) {
                throw new AssertionError("No API baseline at " + baseline.toAbsolutePath() + "; create it with -D"
                        + UPDATE_PROPERTY + "=true and commit it");
            }
            List<String> recorded = Files.readAllLines(baseline, StandardCharsets.UTF_8);
            Set<String> added = new LinkedHashSet<>(current);
            recorded.forEach(added::remove);
            Set<String> removed = new LinkedHashSet<>(recorded);
            current.forEach(removed::remove);
            if (!added.isEmpty() || !removed.isEmpty()) {
                throw new AssertionError("The public API of " + String.join(", ", packages) + " differs from "
                        + baseline + ".\nRemoved or changed (breaks callers or implementers):\n  "
                        + String.join("\n  ", removed) + "\nAdded:\n  " + String.join("\n  ", added)
                        + "\nIf the change is meant, run the build with -D" + UPDATE_PROPERTY + "=true, commit the"
                        + " baseline, and list the change in CHANGELOG.md.");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The sorted lines that describe the public API of {@code packages}. */
    public static List<String> describe(Path classes, ClassLoader loader, String... packages) {
        TreeSet<String> lines = new TreeSet<>();
        for (String pkg : packages) {
            Path dir = classes.resolve(pkg.replace('.', '/'));
            if (!Files.isDirectory(dir)) {
                throw new IllegalArgumentException("No package " + pkg + " under " + classes);
            }
            try (Stream<Path> files = Files.list(dir)) {
                for (Path file : files.filter(f -> f.toString().endsWith(".class"))
                        .sorted()
                        .toList()) {
                    String simple = file.getFileName().toString().replaceFirst("\\.class$", "");
                    if (simple.equals("package-info") || simple.equals("module-info")) {
                        continue;
                    }
                    Class<?> type = Class.forName(pkg + "." + simple, false, loader);
                    if (isPublicApi(type)) {
                        describe(type, lines);
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
        }
        return new ArrayList<>(lines);
    }

    private static boolean isPublicApi(Class<?> type) {
        if (type.isAnonymousClass() || type.isLocalClass() || type.isSynthetic()) {
            return false;
        }
        for (Class<?> c = type; c != null; c = c.getDeclaringClass()) {
            if (!Modifier.isPublic(c.getModifiers())) {
                return false;
            }
        }
        return true;
    }

    private static void describe(Class<?> type, Set<String> lines) {
        String name = type.getTypeName();
        StringBuilder header = new StringBuilder(name).append(" ").append(kind(type));
        Type superclass = type.getGenericSuperclass();
        if (superclass != null && superclass != Object.class && !type.isEnum() && !type.isRecord()) {
            header.append(" extends ").append(superclass.getTypeName());
        }
        Type[] interfaces = type.getGenericInterfaces();
        if (interfaces.length > 0) {
            header.append(type.isInterface() ? " extends " : " implements ")
                    .append(Arrays.stream(interfaces).map(Type::getTypeName).collect(Collectors.joining(", ")));
        }
        if (type.isSealed()) {
            header.append(" permits ")
                    .append(Arrays.stream(type.getPermittedSubclasses())
                            .map(Class::getTypeName)
                            .sorted()
                            .collect(Collectors.joining(", ")));
        }
        lines.add(header.toString());
        for (Constructor<?> c : type.getDeclaredConstructors()) {
            if (visible(c.getModifiers()) && !c.isSynthetic()) {
                lines.add(member(name, c.toGenericString()));
            }
        }
        for (Method m : type.getDeclaredMethods()) {
            if (visible(m.getModifiers()) && !m.isSynthetic() && !m.isBridge()) {
                lines.add(member(name, m.toGenericString()));
            }
        }
        for (Field f : type.getDeclaredFields()) {
            if (visible(f.getModifiers()) && !f.isSynthetic()) {
                lines.add(member(name, f.toGenericString()));
            }
        }
    }

    /** {@code Type#member}, the member without its declaring type's name (one line per member, sorted by type). */
    private static String member(String type, String generic) {
        return type + "#" + generic.replace(" " + type + ".", " ");
    }

    private static String kind(Class<?> type) {
        String modifiers = Modifier.toString(type.getModifiers()
                & (type.isInterface() ? Modifier.PUBLIC | Modifier.STATIC : Modifier.classModifiers()));
        String kind = type.isAnnotation()
                ? "@interface"
                : type.isInterface() ? "interface" : type.isEnum() ? "enum" : type.isRecord() ? "record" : "class";
        return (modifiers.isEmpty() ? "" : modifiers + " ") + kind;
    }

    private static boolean visible(int modifiers) {
        return Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers);
    }
}
