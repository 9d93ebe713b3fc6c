package org.locksmith.lock.jdbc.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The statements of a {@code .sql} resource that ships with a backend, such as the schema file DBAs run, so that the
 * backend runs the very text the file holds.
 *
 * <p>The file's format, which its header should repeat: a statement ends with a line that holds only {@code ;}
 * (white space around it allowed), which is not part of the statement; lines starting with {@code --} are comments
 * and left out, and blank lines before a statement too. A {@code ;} at the end of any other line belongs to the
 * statement, so a function body (a PostgreSQL dollar-quoted body, whose statements end with {@code ;}) is never
 * split. The file must end with such a line after its last statement.
 */
public final class SqlScript {
    private SqlScript() {}

    /**
     * The statements of the resource {@code resource}, opened by the backend (a resource in a named module is read
     * by a class of that module: {@code Schema.class.getResourceAsStream(resource)}), each its lines joined by {@code
     * \n}, without the separating {@code ;}. Closes {@code in}.
     *
     * @param in the resource's bytes (UTF-8), or null if it was not found
     * @throws IllegalStateException if the resource is missing or ends inside a statement
     * @throws UncheckedIOException if it cannot be read
     */
    public static List<String> statements(String resource, InputStream in) {
        if (in == null) {
            throw new IllegalStateException(resource + " is missing from the class path");
        }
        try (in) {
            return split(resource, new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("could not read " + resource, e);
        }
    }

    /** The statements of {@code text} (see the class comment); {@code name} names it in the failure. */
    static List<String> split(String name, String text) {
        List<String> statements = new ArrayList<>();
        StringBuilder statement = new StringBuilder();
        for (String line : text.replace("\r\n", "\n").split("\n", -1)) {
            if (line.startsWith("--") || (statement.length() == 0 && line.isBlank())) {
                continue;
            }
            if (line.strip().equals(";")) {
                if (statement.length() == 0) {
                    throw new IllegalStateException(name + " has an empty statement (a ';' line with none before)");
                }
                statements.add(statement.toString().stripTrailing());
                statement.setLength(0);
            } else {
                statement.append(line).append('\n');
            }
        }
        if (statement.length() > 0) {
            throw new IllegalStateException(name + " ends inside a statement (no line holding only ';' after it)");
        }
        return List.copyOf(statements);
    }
}
