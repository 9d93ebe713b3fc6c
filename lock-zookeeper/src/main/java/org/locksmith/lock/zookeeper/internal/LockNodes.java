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
    /**
     * 2<sup>31</sup> - 2<sup>24</sup>: an attempt numbered at or past it fails instead of queueing, and marks the
     * key's parent so that every later attempt fails too, until the key is free and its parent (and counter) gone.
     * The counter is the parent's signed 32-bit child version: ZooKeeper 3.9 stops it at 2<sup>31</sup> - 1, so that
     * every later node gets the same number and the order is lost; older servers let it go negative and, after
     * 2<sup>32</sup>, round to small numbers that sort before nodes still waiting or holding. Either way a new node
     * could take itself for the first in line: two holders.
     */
    static final long SEQUENCE_LIMIT = (1L << 31) - (1L << 24);

    /** ZooKeeper appends a ten-digit, zero-padded sequence number to sequential nodes. */
    static final int SEQUENCE_DIGITS = 10;

    /**
     * Orders the children of a lock node by their sequence number, that is, by arrival, as long as the counter is
     * below {@link #SEQUENCE_LIMIT}: an attempt whose number reaches it fails instead of queueing.
     */
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

    /**
     * The sequence number ZooKeeper appended to a sequential node's name, read as an unsigned 32-bit number so that
     * it keeps rising on servers whose counter goes negative; -1 for a node that is not ours.
     *
     * <p>ZooKeeper names the child after its parent's child version, a signed {@code int} formatted {@code %010d}:
     * {@code 0000000012}, then after 2<sup>31</sup> creates and deletes {@code -2147483648} up to {@code
     * -000000001}. Our names end in the owner tag's {@code -} (a tag has no other {@code -}), so a negative number
     * shows as {@code --} before its digits.
     */
    static long sequence(String name) {
        int n = name.length();
        int start = n;
        while (start > 0 && name.charAt(start - 1) >= '0' && name.charAt(start - 1) <= '9') {
            start--;
        }
        int digits = n - start;
        if (digits < SEQUENCE_DIGITS - 1 || digits > SEQUENCE_DIGITS || start < 2 || name.charAt(start - 1) != '-') {
            return -1;
        }
        long value = 0;
        for (int i = start; i < n; i++) {
            value = value * 10 + (name.charAt(i) - '0');
        }
        if (name.charAt(start - 2) != '-') {
            return digits == SEQUENCE_DIGITS && value <= Integer.MAX_VALUE ? value : -1;
        }
        // negative: "-" and nine or ten digits, ten characters at least, down to Integer.MIN_VALUE
        return value >= 1 && value <= -(long) Integer.MIN_VALUE ? (1L << 32) - value : -1;
    }

    /** The last segment of a path. */
    static String name(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }
}
