package org.locksmith.example.bootparent;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.testservers.TestMySql;
import org.locksmith.lock.testservers.TestPostgres;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The application, built on Spring Boot's parent, on the JDBC backends: lock-mysql and lock-postgres run on the
 * HikariCP, mysql-connector-j and PostgreSQL driver that Spring Boot manages, not the versions the project pins.
 */
class BootParentJdbcApplicationTest {
    private static final String KEY = "boot-parent-" + UUID.randomUUID();

    @Test
    void takesALockOnMySqlWithBootsHikariAndDriver() throws InterruptedException {
        takesALock(TestMySql.baseUrl() + "?table=locksmith_boot_parent&poolSize=2", "mysql");
    }

    @Test
    void takesALockOnPostgresWithBootsHikariAndDriver() throws InterruptedException {
        takesALock(TestPostgres.baseUrl() + "?poolSize=2", "postgres");
    }

    @Test
    void theDriversAreTheOnesSpringBootManages() throws Exception {
        // Spring Boot 4.0.7's spring-boot-dependencies: HikariCP 7.0.x, mysql-connector-j 9.x, postgresql 42.7.x; the
        // project's parent pins HikariCP 7.1.0 and mysql-connector-j 26.10.0, which must not leak into this tree.
        assertThat(jarOf(HikariDataSource.class)).startsWith("HikariCP-7.0.");
        assertThat(jarOf(com.mysql.cj.jdbc.Driver.class)).startsWith("mysql-connector-j-9.");
        assertThat(jarOf(org.postgresql.Driver.class)).startsWith("postgresql-42.7.");
    }

    private static String jarOf(Class<?> type) throws Exception {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI())
                .getFileName()
                .toString();
    }

    private static void takesALock(String url, String backend) throws InterruptedException {
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(BootParentApplication.class)
                .run("--locksmith.url=" + url, "--spring.main.web-application-type=none")) {
            LockClient locks = context.getBean(LockClient.class);
            assertThat(locks.backend()).startsWith(backend);
            try (LockLease lease = locks.lock(KEY).acquire(Duration.ofSeconds(5))) {
                assertThat(lease.isValid()).isTrue();
                assertThat(locks.lock(KEY).tryAcquireDetached())
                        .as("a second holder is refused while the first holds the lock")
                        .isEmpty();
            }
        }
    }
}
