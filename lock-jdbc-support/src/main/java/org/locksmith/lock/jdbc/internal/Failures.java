package org.locksmith.lock.jdbc.internal;

/** The text of a store failure, for the backends' exception messages. */
public final class Failures {
    private Failures() {}

    /**
     * The message of {@code e} and, where a pool or driver wrapped the real failure ("Connection is not available,
     * request timed out", "Communications link failure"), the innermost cause's too (at most ten causes deep): the
     * server's own reason (access denied, unknown database, password authentication failed) or the network's
     * (Connection refused). Never null; {@code "null"} for a failure without a message.
     */
    public static String reason(Throwable e) {
        Throwable root = e;
        for (int i = 0; i < 10 && root.getCause() != null && root.getCause() != root; i++) {
            root = root.getCause();
        }
        String message = String.valueOf(e.getMessage());
        if (root == e || root.getMessage() == null || message.contains(root.getMessage())) {
            return message;
        }
        return message + " (" + root.getClass().getSimpleName() + ": " + root.getMessage() + ")";
    }
}
