package org.locksmith.lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.spi.LockUrl;

class LockUrlTest {

    @Test
    void parsesEveryPart() {
        LockUrl url = LockUrl.parse("mysql://app:p%40ss:w@db1:3306,db2/locks%2Fdb?strategy=row&table=t_1&prefix=a%20b");
        assertThat(url.scheme()).isEqualTo("mysql");
        assertThat(url.user()).contains("app");
        assertThat(url.password()).contains("p@ss:w");
        assertThat(url.hosts())
                .containsExactly(new LockUrl.HostAndPort("db1", 3306), new LockUrl.HostAndPort("db2", -1));
        assertThat(url.hosts().get(1).port(3306)).isEqualTo(3306);
        assertThat(url.path()).isEqualTo("locks/db");
        assertThat(url.parameters())
                .containsExactly(
                        java.util.Map.entry("strategy", "row"),
                        java.util.Map.entry("table", "t_1"),
                        java.util.Map.entry("prefix", "a b"));
        assertThat(url.toString()).contains("app:****@").doesNotContain("p@ss");
    }

    @Test
    void parsesIpv6AndBareHosts() {
        LockUrl url = LockUrl.parse("redis://[::1]:6380");
        assertThat(url.hosts()).containsExactly(new LockUrl.HostAndPort("::1", 6380));
        assertThat(url.toString()).isEqualTo("redis://[::1]:6380");
        assertThat(LockUrl.parse("REDIS://h").scheme()).isEqualTo("redis");
        assertThat(LockUrl.parse("zookeeper://h/").path()).isEmpty();
        assertThat(LockUrl.parse("redis://h?a=1+2").parameter("a", "")).isEqualTo("1+2");
    }

    @Test
    void typedParametersExplainWhatIsWrong() {
        LockUrl url = LockUrl.parse("redis://h?leaseMs=abc&pool=0&flag=yes&ok=250");
        assertThatThrownBy(() -> url.millisParameter(
                        "leaseMs", Duration.ofSeconds(30), Duration.ofMillis(1), Duration.ofHours(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseMs='abc'")
                .hasMessageContaining("whole number");
        assertThatThrownBy(() -> url.intParameter("pool", 8, 1, 100)).hasMessageContaining("from 1 to 100");
        assertThatThrownBy(() -> url.booleanParameter("flag", false)).hasMessageContaining("true or false");
        assertThat(url.millisParameter("ok", Duration.ZERO, Duration.ZERO, Duration.ofHours(1)))
                .isEqualTo(Duration.ofMillis(250));
        assertThat(url.intParameter("absent", 7, 1, 100)).isEqualTo(7);
    }

    @Test
    void rejectsMalformedUrlsWithoutLeakingThePassword() {
        assertThatThrownBy(() -> LockUrl.parse("127.0.0.1:6379")).hasMessageContaining("scheme");
        assertThatThrownBy(() -> LockUrl.parse("redis://h:99999")).hasMessageContaining("1-65535");
        assertThatThrownBy(() -> LockUrl.parse("redis://h:x")).hasMessageContaining("not a number");
        assertThatThrownBy(() -> LockUrl.parse("redis://h?a=1&a=2")).hasMessageContaining("twice");
        assertThatThrownBy(() -> LockUrl.parse("redis://u:secret@h:x"))
                .hasMessageContaining("****")
                .hasMessageNotContaining("secret");
        assertThatThrownBy(() -> LockUrl.parse(null)).isInstanceOf(NullPointerException.class);
    }
}
