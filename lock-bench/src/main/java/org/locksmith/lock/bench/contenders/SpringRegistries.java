package org.locksmith.lock.bench.contenders;

/** What the Spring Integration contenders share. */
final class SpringRegistries {
    private SpringRegistries() {}

    /**
     * Whether a registry lock's failure says the lock object left the registry's cache ("was evicted from the
     * exhausted cache. Obtain a fresh one"), which Spring Integration 6.4+ reports for a lock in use when a
     * concurrent {@code obtain} grows the cache it reads without its lock.
     */
    static boolean evictedFromCache(RuntimeException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof IllegalStateException
                    && t.getMessage() != null
                    && t.getMessage().contains("evicted from the exhausted cache")) {
                return true;
            }
        }
        return false;
    }
}
