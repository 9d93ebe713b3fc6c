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
        List<String[]> all = new ArrayList<>();
        for (String[] pair : pairs) {
            all.add(new String[] {p + pair[0], p + pair[1]});
        }
        all.addAll(twins(p));
        for (String[] pair : all) {
            String k1 = pair[0];
            String k2 = pair[1];
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
        String shown = s.replace("\n", "\\n").replace("\u0000", "\\u0000");
        return shown.length() <= 80
                ? shown
                : shown.substring(0, 40) + "...(" + s.length() + " chars)..." + shown.substring(shown.length() - 20);
    }

    /**
     * Keys a store may merge without meaning to, each pair differing only where a shortcut would not look: at the
     * last character past a length limit (255 or 767 bytes, 256, 512 or 1024 characters), at the first character of
     * a long key (a suffix kept), by a Java {@code hashCode} collision, by path normalisation, by a character that
     * Unicode normalisation or a trim would drop, or by a suffix a backend might use for its own entries.
     */
    static List<String[]> twins(String prefix) {
        List<String[]> pairs = new ArrayList<>();
        for (int length : new int[] {64, 100, 128, 250, 255, 256, 257, 500, 512, 767, 768, 1000, 1023, 1024}) {
            String body = pad(prefix, 'x', length - 1);
            pairs.add(new String[] {body + "a", body + "b"});
        }
        // Multi-byte characters: the same byte limits, reached with fewer characters.
        for (char c : new char[] {'\u00e9', '\u4e2d'}) {
            String body = pad(prefix, c, Locks.MAX_KEY_LENGTH - 1);
            pairs.add(new String[] {body + "a", body + "b"});
            for (int bytes : new int[] {255, 256, 767, 768}) {
                String b = pad(prefix, c, Math.min(Locks.MAX_KEY_LENGTH - 1, prefix.length() + bytes / 2));
                pairs.add(new String[] {b + "a", b + "b"});
            }
        }
        String tail = pad("", 'y', Locks.MAX_KEY_LENGTH - prefix.length() - 1);
        pairs.add(new String[] {prefix + "a" + tail, prefix + "b" + tail});
        String[][] fixed = {
            {"Aa", "BB"}, // equal String.hashCode()
            {"AaAa", "BBBB"},
            {"AaBB", "BBAa"},
            {"a/b", "a//b"},
            {"a/b", "a/./b"},
            {"b", "a/../b"},
            {"a/b", "a/b/"},
            {"a/b", "/a/b"},
            {"ab", "a\u200bb"}, // zero-width space
            {"ab", "a\ufeffb"}, // zero-width no-break space
            {"ab", "a\u00adb"}, // soft hyphen
            {"fi", "\ufb01"}, // ligature (NFKC folds it)
            {"A", "\uff21"}, // full-width A
            {"k", "k\t"},
            {"k", "k:waiters"},
            {"k", "k:queue"},
            {"k", "k/lock-0000000000"},
            {"k", "k_fence"},
            {"k", "k.lock"},
            {"k", "k:fence"},
            {"k", "k-lock"}
        };
        for (String[] f : fixed) {
            pairs.add(new String[] {prefix + f[0], prefix + f[1]});
            // Both ways: a backend's own entry under "k" + suffix may collide only when "k" is the one held.
            pairs.add(new String[] {prefix + f[1], prefix + f[0]});
        }
        return pairs;
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
