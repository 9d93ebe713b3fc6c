package org.locksmith.lock.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * How long a refused waiter may block, from the holder's {@code PTTL} that the acquire script reports. A real
 * server reports {@code PTTL 0} only when the holder's lease ends in the very millisecond the script runs, which a
 * test cannot arrange, so the decision is checked here on the values Redis defines.
 */
class WaitCapTest {
    private static final Duration LEASE = Duration.ofSeconds(30);

    @Test
    void aLeaseEndingNowCapsTheWaitAtOneMillisecondNotAWholeLease() {
        assertThat(Waiter.waitCapNanos(0, LEASE)).isEqualTo(Duration.ofMillis(1).toNanos());
    }

    @Test
    void aLiveLeaseCapsTheWaitJustPastItsEnd() {
        assertThat(Waiter.waitCapNanos(600, LEASE))
                .isEqualTo(Duration.ofMillis(601).toNanos());
    }

    @Test
    void aKeyWithoutExpiryIsLookedAtAgainAfterOneLease() {
        assertThat(Waiter.waitCapNanos(-1, LEASE)).isEqualTo(LEASE.toNanos());
    }
}
