package org.locksmith.lock.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.mysql.internal.Schema;

/** The DDL shipped for DBAs is the DDL the backend runs, and table names are validated before any SQL. */
class SchemaFileTest {

    @Test
    void shippedSchemaMatchesTheBackendsDdl() throws Exception {
        String file;
        try (InputStream in = MySqlLocks.class.getResourceAsStream("schema.sql")) {
            assertThat(in)
                    .as("org/locksmith/lock/mysql/schema.sql on the class path")
                    .isNotNull();
            file = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        String normalisedFile = file.replaceAll("(?m)^--.*$", "").replaceAll("\\s+", " ");
        for (String ddl : Schema.ddl("locksmith_lock")) {
            assertThat(normalisedFile).contains(ddl.replaceAll("\\s+", " "));
        }
    }

    @Test
    void ddlNamesTheConfiguredTablesOnly() {
        assertThat(Schema.ddl("t_9"))
                .hasSize(3)
                .allSatisfy(ddl -> assertThat(ddl).doesNotContain("locksmith").doesNotEndWith(";"))
                .anySatisfy(ddl -> assertThat(ddl).startsWith("CREATE TABLE IF NOT EXISTS `t_9` ("))
                .anySatisfy(ddl -> assertThat(ddl).startsWith("CREATE TABLE IF NOT EXISTS `t_9_fence` ("))
                .anySatisfy(ddl -> assertThat(ddl).startsWith("CREATE TABLE IF NOT EXISTS `t_9_shard` ("));
    }

    @Test
    void tableNamesThatCouldInjectSqlAreRejected() {
        for (String bad : new String[] {"", "a b", "t;DROP TABLE x", "`t`", "t-1", "1t", "x".repeat(58), "t.u"}) {
            assertThatThrownBy(() -> MySqlLocks.builder().table(bad))
                    .as("table name %s", bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("table name");
        }
        MySqlLocks.builder().table("_ok_Table_9");
    }
}
