package org.locksmith.lock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;

/**
 * Numbers sent to Redis do not depend on the JVM's default locale: under locales whose digits are not ASCII
 * (Arabic-Indic, Extended Arabic-Indic, Bengali, Devanagari), a contended acquire waits in {@code BLPOP} and is
 * granted like anywhere else.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisLocaleTest extends EnvironmentRedisTest {
    private final Locale original = Locale.getDefault();

    @AfterEach
    void restoreLocale() {
        Locale.setDefault(original);
    }

    @ParameterizedTest
    @ValueSource(strings = {"ar-EG", "fa-IR", "bn-BD", "mr-IN"})
    void aContendedAcquireWaitsAndIsGrantedWhateverTheDefaultLocale(String tag) throws Exception {
        Locale.setDefault(Locale.forLanguageTag(tag));
        String url = url("prefix=" + URLEncoder.encode(prefix, StandardCharsets.UTF_8));
        ExecutorService threads = Executors.newSingleThreadExecutor();
        try (LockClient holder = Locks.open(url);
                LockClient waiter = Locks.open(url)) {
            LockLease held = holder.lock("locale").acquire(Duration.ofSeconds(2));
            Future<Long> waited = threads.submit(() -> {
                try (LockLease lease = waiter.lock("locale").acquire(Duration.ofSeconds(5))) {
                    return lease.fencingToken();
                }
            });
            Thread.sleep(300); // the waiter is in BLPOP by now, with a timeout sent as text
            held.release();
            assertThat(waited.get(10, TimeUnit.SECONDS))
                    .as("the waiter under default locale %s is granted after the release", tag)
                    .isGreaterThan(held.fencingToken());
        } finally {
            threads.shutdownNow();
        }
    }
}
