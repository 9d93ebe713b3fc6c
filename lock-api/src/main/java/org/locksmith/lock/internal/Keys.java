package org.locksmith.lock.internal;

import java.util.Objects;
import org.locksmith.lock.Locks;

/** Key checks done before any I/O, so that every backend accepts and rejects the same keys. */
final class Keys {
    private Keys() {}

    static String validate(String key) {
        Objects.requireNonNull(key, "key");
        if (key.isEmpty()) {
            throw new IllegalArgumentException("key must not be empty");
        }
        if (key.length() > Locks.MAX_KEY_LENGTH) {
            throw new IllegalArgumentException(
                    "key is " + key.length() + " chars long; the limit is " + Locks.MAX_KEY_LENGTH);
        }
        // An unpaired surrogate has no UTF-8 form: encoders replace it with '?', so two distinct keys would
        // map to the same lock in every store.
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < key.length() && Character.isLowSurrogate(key.charAt(i + 1))) {
                    i++;
                    continue;
                }
                throw new IllegalArgumentException("key has an unpaired surrogate at index " + i);
            }
            if (Character.isLowSurrogate(c)) {
                throw new IllegalArgumentException("key has an unpaired surrogate at index " + i);
            }
        }
        return key;
    }
}
