package org.locksmith.lock.springboot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;
import org.locksmith.lock.testservers.PrivateRedis;

/**
 * An acquire against a Redis that refuses the connection (the server is gone) sent nothing, so nothing can have been
 * granted: the failure says the connection was refused, and no clean-up release is attempted or logged as if the
 * acquire's reply had been lost.
 */
class RedisRefusedConnectionLogTest {

    @Test
    void aRefusedConnectionIsReportedAsRefusedAndNotAsALostReply() {
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        Logger logger = Logger.getLogger("org.locksmith");
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                records.add(record);
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        logger.addHandler(handler);
        try (PrivateRedis redis = PrivateRedis.start();
                LockClient client = Locks.open(redis.url("connectTimeoutMs=500&timeoutMs=500"))) {
            redis.close(); // SIGKILL: every later connection is refused
            Throwable failure = catchThrowable(() -> client.lock("refused").tryAcquire());
            assertThat(failure)
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("127.0.0.1:" + redis.port())
                    .hasMessageContaining("refused");
            await().during(Duration.ofMillis(1_500))
                    .atMost(Duration.ofSeconds(5))
                    .untilAsserted(() -> assertThat(records)
                            .filteredOn(r -> r.getLevel().intValue() >= Level.WARNING.intValue())
                            .extracting(LogRecord::getMessage)
                            .noneMatch(m -> m.contains("reply was lost") || m.contains("Could not release")));
        } finally {
            logger.removeHandler(handler);
        }
    }
}
