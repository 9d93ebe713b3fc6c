package org.locksmith.lock.postgres.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The schema the backend runs is the shipped schema.sql, its function body whole, with the configured table. */
class PgSchemaFileTest {

    @Test
    void schemaNamesTheConfiguredTableAndKeepsTheFunctionWhole() {
        assertThat(PgSql.schema("t_9"))
                .hasSize(2)
                .allSatisfy(
                        sql -> assertThat(sql).doesNotContain("locksmith_lock").doesNotEndWith(";"))
                .anySatisfy(sql -> assertThat(sql).startsWith("CREATE TABLE IF NOT EXISTS t_9 ("))
                .anySatisfy(sql -> assertThat(sql)
                        .startsWith("CREATE OR REPLACE FUNCTION t_9_acquire(")
                        .contains("ERRCODE = '" + PgSql.SHARED_SESSION + "'")
                        .contains("UPDATE t_9 SET token")
                        .contains("INSERT INTO t_9 (key_hash, id, token)")
                        .endsWith("END\n$f$"));
    }
}
