package org.locksmith.lock.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The cheap part of the virtual-thread scenario, on whatever JDK the build runs (17 by default): the reflective executor
 * either fails with a message naming the JDK to use, or runs tasks on virtual threads. The scenario itself runs only
 * with {@code -Pvthreads}.
 */
class VirtualThreadsAtScaleTest {

    @Test
    void theExecutorRunsVirtualThreadsOrSaysWhichJdkToUse() throws Exception {
        if (Runtime.version().feature() < 21) {
            assertThatThrownBy(VirtualThreadsAtScale::newVirtualThreadPerTaskExecutor)
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("Java 21 or newer")
                    .hasMessageContaining(Runtime.version().toString())
                    .hasMessageContaining("-Dvthreads.java=");
            return;
        }
        ExecutorService executor = VirtualThreadsAtScale.newVirtualThreadPerTaskExecutor();
        try {
            Future<Object> virtual =
                    executor.submit(() -> Thread.class.getMethod("isVirtual").invoke(Thread.currentThread()));
            assertThat(virtual.get(5, TimeUnit.SECONDS)).isEqualTo(true);
        } finally {
            executor.shutdown();
        }
    }

    @Test
    void settingsDefaultToTenThousandThreadsOnAHundredKeysAndRejectUnknownArguments() {
        VirtualThreadsAtScale.Settings s = VirtualThreadsAtScale.Settings.parse(new String[0]);
        assertThat(s.threads()).isEqualTo(10_000);
        assertThat(s.keys()).isEqualTo(100);
        assertThat(s.limit().toSeconds()).isEqualTo(60);
        assertThat(s.backends()).containsExactlyInAnyOrder(VirtualThreadsAtScale.Backend.values());
        assertThatThrownBy(() -> VirtualThreadsAtScale.Settings.parse(new String[] {"--thread=5"}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Unknown argument --thread=5");
    }
}
