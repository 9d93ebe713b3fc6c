package org.locksmith.lock.zookeeper.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.zookeeper.common.PathUtils;
import org.junit.jupiter.api.Test;

/** The key encoding: valid ZooKeeper names, injective, readable for ordinary keys. */
class LockNodesTest {

    @Test
    void ordinaryKeysStayReadable() {
        assertThat(LockNodes.encodeKey("orders:42")).isEqualTo("orders:42");
        assertThat(LockNodes.encodeKey("a/b")).isEqualTo("a%2Fb");
        assertThat(LockNodes.encodeKey(".")).isEqualTo("%2E");
        assertThat(LockNodes.encodeKey("..")).isEqualTo("%2E%2E");
        assertThat(LockNodes.encodeKey("%")).isEqualTo("%25");
        assertThat(LockNodes.encodeKey("é")).isEqualTo("%C3%A9");
    }

    @Test
    void randomKeysEncodeToValidDistinctNamesThatDecodeBack() {
        SplittableRandom random = new SplittableRandom(42);
        Map<String, String> seen = new HashMap<>();
        for (int i = 0; i < 20_000; i++) {
            StringBuilder key = new StringBuilder();
            int length = 1 + random.nextInt(i % 100 == 0 ? 1024 : 12);
            while (key.length() < length) {
                int cp = random.nextInt(4) == 0 ? random.nextInt(0x80) : random.nextInt(0x1_0000, 0x1_F000);
                if (random.nextBoolean()) {
                    cp = random.nextInt(0x20, 0x800);
                }
                if (cp >= 0xD800 && cp <= 0xDFFF) {
                    continue;
                }
                if (key.length() + Character.charCount(cp) > length) {
                    break;
                }
                key.appendCodePoint(cp);
            }
            if (key.isEmpty()) {
                continue;
            }
            String k = key.toString();
            String name = LockNodes.encodeKey(k);
            PathUtils.validatePath("/root/" + name);
            assertThat(name).doesNotContain("/").isNotIn(".", "..");
            assertThat(decode(name)).isEqualTo(k);
            String previous = seen.put(name, k);
            assertThat(previous == null || previous.equals(k))
                    .as("collision of %s", name)
                    .isTrue();
        }
    }

    @Test
    void rootsAreValidatedBeforeAnyIo() {
        assertThat(LockNodes.validateRoot("locks")).isEqualTo("/locks");
        assertThat(LockNodes.validateRoot("/a/b/")).isEqualTo("/a/b");
        assertThatThrownBy(() -> LockNodes.validateRoot("/")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> LockNodes.validateRoot("/a//b")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> LockNodes.validateRoot("/a/./b")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> LockNodes.validateRoot("/zookeeper")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void sequencesOrderNodesByArrivalWhateverTheirPrefix() {
        assertThat(LockNodes.sequence("_c_0f-owner-0000000012")).isEqualTo(12);
        assertThat(LockNodes.sequence("garbage")).isEqualTo(-1);
        assertThat(LockNodes.BY_SEQUENCE.compare("_c_ff-a-0000000002", "_c_00-b-0000000010"))
                .isNegative();
    }

    @Test
    void sequencesOrderNodesAcrossTheCounterWrap() {
        // ZooKeeper names a sequential child after its parent's signed 32-bit child version, formatted "%010d"
        // (PrepRequestProcessor), which goes negative after 2^31 creates and deletes.
        int[] counters = {
            Integer.MAX_VALUE - 2,
            Integer.MAX_VALUE,
            Integer.MIN_VALUE,
            Integer.MIN_VALUE + 1,
            -1_000_000_001,
            -1_000_000_000,
            -999_999_999,
            -10,
            -1
        };
        List<String> inCreationOrder = new ArrayList<>();
        for (int counter : counters) {
            String name = "_c_0f-owner7-" + String.format(Locale.ENGLISH, "%010d", counter);
            assertThat(LockNodes.sequence(name)).as(name).isEqualTo(Integer.toUnsignedLong(counter));
            inCreationOrder.add(name);
        }
        List<String> sorted = new ArrayList<>(inCreationOrder);
        Collections.reverse(sorted);
        sorted.sort(LockNodes.BY_SEQUENCE);
        assertThat(sorted).containsExactlyElementsOf(inCreationOrder);
        assertThat(LockNodes.sequence("_c_0f-owner7-000000001"))
                .as("nine digits")
                .isEqualTo(-1);
        assertThat(LockNodes.sequence("_c_0f-owner7-0000000001")).isEqualTo(1);
    }

    private static String decode(String name) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '%') {
                out.write(Integer.parseInt(name.substring(i + 1, i + 3), 16));
                i += 2;
            } else {
                out.write(c);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }
}
