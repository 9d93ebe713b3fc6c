package org.locksmith.lock.tck.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;

/** Contract 14: any valid key works, distinct keys never collide, invalid keys are rejected before any I/O. */
public final class KeyContract {
    private final TckEnv env;

    public KeyContract(TckEnv env) {
        this.env = env;
    }

    /** Keys that break naive encodings; each is appended to the test's unique prefix. */
    static final List<String> UNUSUAL = List.of(
            "ключ-键-キー-🔒-ü-ñ",
            "a/b/c",
            "/",
            "//",
            "trailing/",
            "..",
            ".",
            "it's \"quoted\" `back`",
            "%",
            "%2F%25%00",
            "'; DROP TABLE locks; --",
            "a' OR '1'='1",
            "\\",
            "]]..redis.call('DEL', KEYS[1])..[[",
            "KEYS[1] ARGV[1]",
            "{tag}",
            "{",
            "}",
            "*?[]^$()|+",
            " ",
            "  leading and trailing  ",
            "tab\there",
            "new\nline",
            "carriage\r\nreturn",
            "nul\u0000char",
            "zookeeper",
            "emoji 👨‍👩‍👧 zwj",
            "\u200b zero width");

    public void unusualKeysWork() throws Exception {
        LockClient a = env.client("A");
        LockClient b = env.client("B");
        List<String> keys = new ArrayList<>();
        for (String s : UNUSUAL) {
            keys.add(env.keyPrefix() + s);
        }
        keys.add(pad(env.keyPrefix(), 'x', Locks.MAX_KEY_LENGTH));
        keys.add(pad(env.keyPrefix(), 'é', Locks.MAX_KEY_LENGTH));
        StringBuilder astral = new StringBuilder(env.keyPrefix());
        while (astral.length() + 2 <= Locks.MAX_KEY_LENGTH) {
            astral.append("🔒");
        }
        keys.add(astral.toString());
        for (String key : keys) {
            LockLease lease;
            try {
                lease = a.lock(key).acquire(Duration.ofSeconds(5));
            } catch (RuntimeException e) {
                throw new AssertionError(env.at(a, key) + "a valid key could not be acquired: " + e, e);
            }
            assertThat(lease.key()).as(env.at(a, key) + "lease.key()").isEqualTo(key);
            Probes.assertNotGrantable(env, b, key, "client A held it");
            lease.release();
            Probes.assertGrantable(env, b, key, "after client A released it");
        }
    }

    private static String pad(String prefix, char c, int length) {
        StringBuilder s = new StringBuilder(prefix);
        while (s.length() < length) {
            s.append(c);
        }
        return s.toString();
    }

    /** Keys that a careless encoding (case folding, trimming, hash tags, escaping) would merge stay distinct. */
    public void distinctKeysNeverCollide() throws Exception {
        LockClient a = env.client("A");
        LockClient b = env.client("B");
        String p = env.keyPrefix();
        String[][] pairs = {
            {"Key", "key"},
            {"key", "key "},
            {"key", " key"},
            {"key", "{key}"},
            {"{tag}a", "{tag}b"},
            {"a/b", "a%2Fb"},
            {"a/b", "a_b"},
            {"a:b", "a_b"},
            {"a.b", "a_b"},
            {"é", "e\u0301"},
            {"ß", "ss"},
            {"a\u0000", "a"},
            {"a\n", "a"},
            {"'", "\""},
            {"\\", "/"},
            {"%", "%25"}
        };
        for (String[] pair : pairs) {
            String k1 = p + pair[0];
            String k2 = p + pair[1];
            LockLease l1 = a.lock(k1).acquire(Duration.ofSeconds(5));
            Optional<LockLease> l2 = b.lock(k2).tryAcquire();
            assertThat(l2)
                    .as(env.at(b, k2) + "could not get this key while client A held the distinct key '" + printable(k1)
                            + "': the two keys collide in the store")
                    .isPresent();
            l2.get().release();
            l1.release();
        }
    }

    private static String printable(String s) {
        return s.replace("\n", "\\n").replace("\u0000", "\\u0000");
    }

    /** null, empty, over-long and ill-formed keys are rejected by lock(key) itself, before any I/O. */
    public void invalidKeysRejected() {
        LockClient a = env.client("A");
        assertThatThrownBy(() -> a.lock(null))
                .as(env.at(a, null) + "lock(null)")
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> a.lock(""))
                .as(env.at(a, "") + "lock(\"\")")
                .isInstanceOf(IllegalArgumentException.class);
        String tooLong = pad(env.keyPrefix(), 'x', Locks.MAX_KEY_LENGTH + 1);
        assertThatThrownBy(() -> a.lock(tooLong))
                .as(env.at(a, tooLong) + "a key of " + tooLong.length() + " chars")
                .isInstanceOf(IllegalArgumentException.class);
        for (String bad : new String[] {"\uD800", "a\uDC00b", env.keyPrefix() + "\uD83D"}) {
            assertThatThrownBy(() -> a.lock(bad))
                    .as(env.at(a, "(unpaired surrogate)") + "a key with an unpaired surrogate")
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }
}
