package org.locksmith.lock.mysql.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Encodes keys for MySQL. Keys are compared by the SHA-256 of their UTF-8 bytes, stored as {@code BINARY(32)}: a
 * binary primary key cannot make two keys equal through a collation (case, accents, trailing spaces), and 32 bytes
 * fit every index limit whereas 1024 characters of utf8mb4 (4096 bytes) do not.
 */
public final class KeyCodec {
    private static final char[] BASE32 = "abcdefghijklmnopqrstuvwxyz234567".toCharArray();

    private KeyCodec() {}

    public static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }

    /**
     * The {@code GET_LOCK} name of {@code key} for lock table {@code table} in database {@code database}. Lock names
     * are server-wide, not per database, so the database is part of the name: two applications using different
     * databases (or different tables) of one server never share a name.
     */
    public static String namedLockName(String database, String table, String key) {
        return lockName(database + '\0' + table, key);
    }

    /**
     * The {@code GET_LOCK} name of {@code key} in {@code namespace}: {@code "ls_"} + lower-case base32 of
     * SHA-256(namespace NUL key), 55 characters. It fits MySQL's 64-character limit, and lower-case base32 survives
     * MySQL's case-insensitive comparison of lock names; two keys share a name only if SHA-256 collides.
     */
    static String lockName(String namespace, String key) {
        byte[] hash = sha256(namespace + '\0' + key);
        StringBuilder s = new StringBuilder(55).append("ls_");
        int buffer = 0;
        int bits = 0;
        for (byte b : hash) {
            buffer = (buffer << 8) | (b & 0xff);
            bits += 8;
            while (bits >= 5) {
                s.append(BASE32[(buffer >>> (bits - 5)) & 31]);
                bits -= 5;
            }
        }
        if (bits > 0) {
            s.append(BASE32[(buffer << (5 - bits)) & 31]);
        }
        return s.toString();
    }
}
