package org.locksmith.lock.zookeeper.internal;

import java.nio.charset.StandardCharsets;
import java.util.Comparator;
import org.apache.zookeeper.common.PathUtils;

/**
 * How keys and attempts map to ZooKeeper paths: {@code <root>/<encoded key>/<protection prefix><owner tag>-<seq>}.
 *
 * <p>Keys are percent-encoded over UTF-8, keeping only {@code [A-Za-z0-9_:-]} literal. That makes the mapping
 * injective ({@code %} itself is encoded), keeps {@code /} out of node names, turns {@code .} and {@code ..} into
 * {@code %2E} and {@code %2E%2E}, and keeps out every character ZooKeeper forbids in a name (controls, surrogates,
 * the private-use and specials ranges). A 1024-char key becomes at most 9216 ASCII chars, far below ZooKeeper's
 * only bound on a path (a request must fit {@code jute.maxbuffer}, 1 MB by default).
 */
public final class LockNodes {
    /** ZooKeeper appends a ten-digit, zero-padded sequence number to sequential nodes. */
    static final int SEQUENCE_DIGITS = 10;

    /** Orders the children of a lock node by their sequence number, that is, by arrival. */
    static final Comparator<String> BY_SEQUENCE = Comparator.comparingLong(LockNodes::sequence);

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private LockNodes() {}

    /**
     * Checks a lock root such as {@code /locksmith} or {@code /app/locks} before any I/O.
     *
     * @throws IllegalArgumentException naming what is wrong
     */
    public static String validateRoot(String root) {
        if (root == null || root.isEmpty() || root.equals("/")) {
            throw new IllegalArgumentException(
                    "The ZooKeeper lock root must be a node below '/', such as /locksmith; got '" + root + "'");
        }
        String path = root.startsWith("/") ? root : "/" + root;
        if (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        try {
            PathUtils.validatePath(path);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "The ZooKeeper lock root '" + root + "' is not a valid ZooKeeper path: " + e.getMessage(), e);
        }
        if (path.equals("/zookeeper") || path.startsWith("/zookeeper/")) {
            throw new IllegalArgumentException(
                    "The ZooKeeper lock root '" + root + "' is inside /zookeeper, which ZooKeeper reserves");
        }
        return path;
    }

    /** The encoded node name of {@code key}; see the class comment. */
    public static String encodeKey(String key) {
        StringBuilder out = null;
        byte[] utf8 = null;
        for (int i = 0; i < key.length(); i++) {
            if (!literal(key.charAt(i))) {
                utf8 = key.getBytes(StandardCharsets.UTF_8);
                break;
            }
        }
        if (utf8 == null) {
            return key; // the common case ("orders:42"): no copy
        }
        out = new StringBuilder(utf8.length * 3);
        for (byte b : utf8) {
            char c = (char) (b & 0xFF);
            if (b >= 0 && literal(c)) {
                out.append(c);
            } else {
                out.append('%').append(HEX[(b >> 4) & 0xF]).append(HEX[b & 0xF]);
            }
        }
        return out.toString();
    }

    private static boolean literal(char c) {
        return (c >= 'a' && c <= 'z')
                || (c >= 'A' && c <= 'Z')
                || (c >= '0' && c <= '9')
                || c == '-'
                || c == '_'
                || c == ':';
    }

    /**
     * A name tag for one attempt's node, derived from its owner id, so that an attempt can find its own node when a
     * create was interrupted before its reply arrived. Only {@code [A-Za-z0-9_]} survive; anything else becomes
     * {@code _}, which cannot make two live attempts of one client collide because the core's owner ids differ in
     * their counter digits.
     */
    static String ownerTag(String ownerId) {
        StringBuilder tag = new StringBuilder(ownerId.length() + 1);
        for (int i = 0; i < ownerId.length(); i++) {
            char c = ownerId.charAt(i);
            boolean keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
            tag.append(keep ? c : '_');
        }
        return tag.append('-').toString();
    }

    /** The sequence number ZooKeeper appended to a sequential node's name; -1 for a node that is not ours. */
    static long sequence(String name) {
        int n = name.length();
        if (n < SEQUENCE_DIGITS) {
            return -1;
        }
        long value = 0;
        for (int i = n - SEQUENCE_DIGITS; i < n; i++) {
            char c = name.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            value = value * 10 + (c - '0');
        }
        return value;
    }

    /** The last segment of a path. */
    static String name(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }
}
