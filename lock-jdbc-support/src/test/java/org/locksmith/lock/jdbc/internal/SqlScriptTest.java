package org.locksmith.lock.jdbc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Statements end at a line holding only ';', so a function body's own ';' never splits it; only lines that start
 * with "--" are left out (an indented comment in a body stays).
 */
class SqlScriptTest {

    @Test
    void aFunctionBodyStaysOneStatement() {
        String text = "-- header\r\n--\r\n\r\nCREATE TABLE t (a int);\r\n;\r\n\r\n"
                + "CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $f$\nBEGIN\n  -- a comment\n"
                + "  PERFORM 1;\n  RETURN 1;\nEND\n$f$\n  ;  \n";
        assertThat(SqlScript.statements("x.sql", new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8))))
                .containsExactly(
                        "CREATE TABLE t (a int);",
                        "CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $f$\nBEGIN\n  -- a comment\n  PERFORM 1;\n"
                                + "  RETURN 1;\nEND\n$f$");
    }

    @Test
    void aFileThatEndsInsideAStatementIsRefused() {
        assertThatThrownBy(() -> SqlScript.split("x.sql", "CREATE TABLE t (a int);\n"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("x.sql ends inside a statement");
        assertThatThrownBy(() -> SqlScript.split("x.sql", "-- nothing\n;\n"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("empty statement");
    }

    @Test
    void aMissingResourceIsNamed() {
        assertThatThrownBy(() -> SqlScript.statements("/a/b.sql", null))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("/a/b.sql is missing from the class path");
    }
}
