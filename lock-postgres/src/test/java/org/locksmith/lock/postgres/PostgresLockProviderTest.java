package org.locksmith.lock.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.spi.LockUrl;
import org.locksmith.lock.testservers.TestPostgres;

/** {@link PostgresLockProvider} on an application's {@link DataSource}, against the test server. */
class PostgresLockProviderTest {
    private static final String TABLE = "locksmith_provider_test";
    private static final String KEY = "provider-" + UUID.randomUUID();

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

    @Test
    void opensOnTheApplicationsDataSourceWithTheUrlsSettings() throws Exception {
        assertThat(new PostgresLockProvider().applicationConnectionType()).contains(DataSource.class);
        try (HikariDataSource pool = applicationDataSource()) {
            // restartHoldOffMs=0: the embedded server of a fresh machine may have started a moment ago
            try (LockClient client =
                            Locks.open("postgresql://?table=" + TABLE + "&poolSize=2&restartHoldOffMs=0", pool);
                    LockLease lease = client.lock(KEY).acquire(Duration.ofSeconds(5))) {
                assertThat(lease.isValid()).isTrue();
                assertThat(pool.getHikariPoolMXBean().getActiveConnections())
                        .as("the held lock's session is a connection of the application's pool")
                        .isPositive();
            }
            assertThat(pool.isClosed())
                    .as("closing the lock client leaves the application's open")
                    .isFalse();
        }
    }

    @Test
    void aConnectionParameterIsRejectedBeforeAnyIo() {
        AtomicInteger asked = new AtomicInteger();
        assertThatThrownBy(() ->
                        Locks.open(new PostgresLockProvider(), LockUrl.parse("postgresql://?sslmode=require"), () -> {
                            asked.incrementAndGet();
                            return applicationDataSource();
                        }))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("sslmode does not apply on the application's DataSource")
                .hasMessageContaining("Parameters that apply: checkIntervalMs, createSchema, poolSize");
        assertThat(asked).as("the data source is not even asked for").hasValue(0);
    }

    @Test
    void aBadValueIsRejectedBeforeAnyIo() {
        DataSource unused = (DataSource) java.lang.reflect.Proxy.newProxyInstance(
                DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    throw new AssertionError("the data source was used: " + method.getName());
                });
        assertThatThrownBy(() -> Locks.open("postgresql://?timeoutMs=10", unused))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("timeoutMs");
    }
}
