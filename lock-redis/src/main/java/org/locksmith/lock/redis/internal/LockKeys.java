package org.locksmith.lock.redis.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import redis.clients.jedis.util.JedisClusterCRC16;

/**
 * The Redis keys of one lock. Every key of a lock carries the same hash tag, so that the scripts, which touch
 * several of them, run on Redis Cluster (all keys of one script must live in one slot).
 *
 * <p>Layout: {@code <prefix>{<tag>}:lock:<user key>} (the hash), {@code <prefix>{<tag>}:wake:<user key>} (the
 * wake-up list) and {@code <prefix>{<tag>}:cancel:<owner id>} (a waiter's cancel signal, transient). The tag is a
 * digest of the user key, not the key itself: a user key containing <code>{</code> or <code>}</code> would otherwise
 * choose the slot (Redis hashes only the text between the first braces). Injectivity does not rest on the digest:
 * the user key follows the tag verbatim, the prefix contains no braces, and {@code lock:}, {@code wake:} and {@code
 * cancel:} are prefix-free of each other, so distinct keys always have distinct names.
 */
public record LockKeys(String userKey, String hash, String wake, String scope, int slot) {

    /** Builds the keys of {@code userKey} under {@code prefix} (which must not contain braces). */
    public static LockKeys of(String prefix, String userKey) {
        String scope = prefix + "{" + tag(userKey) + "}:";
        return new LockKeys(userKey, scope + "lock:" + userKey, scope + "wake:" + userKey, scope, slotOf(scope));
    }

    /** The cancel-signal list of one waiting attempt: same slot as the lock, unique to the attempt. */
    public String cancel(String ownerId) {
        return scope + "cancel:" + ownerId;
    }

    private static int slotOf(String scope) {
        return JedisClusterCRC16.getSlot(scope);
    }

    /** 64 bits of SHA-256: enough to spread locks over the 16384 slots; collisions only share a slot. */
    static String tag(String userKey) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(userKey.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every JDK", e);
        }
    }
}
