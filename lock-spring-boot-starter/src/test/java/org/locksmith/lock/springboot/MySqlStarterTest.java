package org.locksmith.lock.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.spi.LockUrl;
import org.locksmith.lock.testservers.TestMySql;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The starter on MySQL/MariaDB: from the URL, and on the application's DataSource. */
class MySqlStarterTest {
    private static final String TABLE = "locksmith_boot_test";
    private static final String KEY = "boot-" + UUID.randomUUID();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(LocksmithAutoConfiguration.class, LocksmithHealthAutoConfiguration.class));

    @Test
    void opensItsOwnConnectionsFromTheUrl() {
        runner.withPropertyValues("locksmith.url=" + TestMySql.baseUrl() + "?table=" + TABLE + "&poolSize=2")
                .run(context -> {
                    LockClient client = context.getBean(LockClient.class);
                    assertThat(client.backend()).startsWith("mysql");
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
                        "locksmith.url=mysql://?table=" + TABLE + "&strategy=lease&leaseMs=5000",
                        "locksmith.use-application-connections=true")
                .withBean("dataSource", DataSource.class, MySqlStarterTest::applicationDataSource)
                .run(context -> {
                    LockClient client = context.getBean(LockClient.class);
                    assertThat(client.backend())
                            .as("the URL's strategy applies")
                            .contains("lease");
                    assertThat(context.getBeanFactory().getDependentBeans("dataSource"))
                            .as("the context closes the lock client before the application's DataSource")
                            .contains("lockClient");
                    HikariDataSource pool = (HikariDataSource) context.getBean(DataSource.class);
                    try (LockLease lease = client.lock(KEY + "-app").acquire(Duration.ofSeconds(5))) {
                        assertThat(lease.isValid()).isTrue();
                        assertThat(pool.getHikariPoolMXBean().getTotalConnections())
                                .as("the lock client works through the application's pool")
                                .isPositive();
                    }
                    assertThat(pool.isClosed()).isFalse();
                });
    }

    private static HikariDataSource applicationDataSource() {
        LockUrl url = LockUrl.parse(TestMySql.baseUrl());
        HikariDataSource pool = new HikariDataSource();
        pool.setJdbcUrl("jdbc:mysql://" + url.hosts().get(0).host() + ":"
                + url.hosts().get(0).port(3306) + "/" + url.path());
        url.user().ifPresent(pool::setUsername);
        url.password().ifPresent(pool::setPassword);
        pool.setMaximumPoolSize(8);
        pool.setPoolName("application");
        return pool;
    }
}
