package org.locksmith.lock.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.testservers.TestPostgres;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The starter on PostgreSQL: from the URL, and on the application's DataSource. */
class PostgresStarterTest {
    private static final String TABLE = "locksmith_boot_test";
    private static final String KEY = "boot-" + UUID.randomUUID();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(LocksmithAutoConfiguration.class, LocksmithHealthAutoConfiguration.class));

    @Test
    void opensItsOwnConnectionsFromTheUrl() {
        runner.withPropertyValues("locksmith.url=" + TestPostgres.baseUrl() + "?table=" + TABLE + "&poolSize=2")
                .run(context -> {
                    LockClient client = context.getBean(LockClient.class);
                    assertThat(client.backend()).startsWith("postgres");
                    try (LockLease lease = client.lock(KEY).acquire(Duration.ofSeconds(5))) {
                        assertThat(lease.isValid()).isTrue();
                    }
                    assertThat(context.getBean(LocksmithHealthIndicator.class)
                                    .health()
                                    .getStatus())
                            .isEqualTo(Status.UP);
                });
    }

    @Test
    void usesTheApplicationsDataSourceWhenAsked() {
        runner.withPropertyValues(
                        "locksmith.url=postgresql://?table=" + TABLE + "&poolSize=2",
                        "locksmith.use-application-connections=true")
                .withBean("dataSource", DataSource.class, PostgresStarterTest::applicationDataSource)
                .run(context -> {
                    LockClient client = context.getBean(LockClient.class);
                    assertThat(context.getBeanFactory().getDependentBeans("dataSource"))
                            .as("the context closes the lock client before the application's DataSource")
                            .contains("lockClient");
                    HikariDataSource pool = (HikariDataSource) context.getBean(DataSource.class);
                    try (LockLease lease = client.lock(KEY + "-app").acquire(Duration.ofSeconds(5))) {
                        assertThat(lease.isValid()).isTrue();
                        assertThat(pool.getHikariPoolMXBean().getActiveConnections())
                                .as("the held lock's session is a connection of the application's pool")
                                .isPositive();
                    }
                });
    }

    private static HikariDataSource applicationDataSource() {
        HikariDataSource pool = new HikariDataSource();
        pool.setJdbcUrl(TestPostgres.jdbcUrl());
        pool.setUsername(TestPostgres.user());
        String password = TestPostgres.password();
        if (password != null) {
            pool.setPassword(password);
        }
        pool.setMaximumPoolSize(8);
        pool.setPoolName("application");
        return pool;
    }
}
