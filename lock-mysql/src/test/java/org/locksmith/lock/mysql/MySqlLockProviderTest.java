package org.locksmith.lock.mysql;

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
import org.locksmith.lock.testservers.TestMySql;

/** {@link MySqlLockProvider} on an application's {@link DataSource}, against the test server. */
class MySqlLockProviderTest {
    private static final String TABLE = "locksmith_provider_test";
    private static final String KEY = "provider-" + UUID.randomUUID();

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

    @Test
    void opensOnTheApplicationsDataSourceWithTheUrlsSettings() throws Exception {
        assertThat(new MySqlLockProvider().applicationConnectionType()).contains(DataSource.class);
        try (HikariDataSource pool = applicationDataSource()) {
            try (LockClient client = Locks.open("mysql://?table=" + TABLE + "&strategy=lease&leaseMs=5000", pool)) {
                assertThat(client.backend()).as("the URL's strategy").contains("lease");
                try (LockLease lease = client.lock(KEY).acquire(Duration.ofSeconds(5))) {
                    assertThat(lease.isValid()).isTrue();
                }
            }
            assertThat(pool.isClosed())
                    .as("closing the lock client leaves the application's open")
                    .isFalse();
        }
    }

    @Test
    void aConnectionParameterIsRejectedBeforeAnyIo() {
        AtomicInteger asked = new AtomicInteger();
        assertThatThrownBy(() -> Locks.open(
                        new MySqlLockProvider(), LockUrl.parse("mysql://?sslMode=REQUIRED&table=" + TABLE), () -> {
                            asked.incrementAndGet();
                            return applicationDataSource();
                        }))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("sslMode does not apply on the application's DataSource")
                .hasMessageContaining("Parameters that apply: checkIntervalMs, createSchema, leaseMs");
        assertThat(asked).as("the data source is not even asked for").hasValue(0);
    }

    @Test
    void aBadValueIsRejectedBeforeAnyIo() {
        DataSource unused = (DataSource) java.lang.reflect.Proxy.newProxyInstance(
                DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    throw new AssertionError("the data source was used: " + method.getName());
                });
        assertThatThrownBy(() -> Locks.open("mysql://?leaseMs=5", unused))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseMs");
        assertThatThrownBy(() -> Locks.open("mysql://?strategy=optimistic", unused))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("optimistic");
    }
}
