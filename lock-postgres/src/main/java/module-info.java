/**
 * Locksmith's PostgreSQL backend: session-level advisory locks, one server session per held lock, keys mapped to
 * advisory lock ids through a key table so that distinct keys never share a lock. Registers the {@code postgresql}
 * URL scheme.
 */
module org.locksmith.lock.postgres {
    requires transitive org.locksmith.lock;
    requires transitive java.sql;
    requires com.zaxxer.hikari;
    requires org.locksmith.lock.jdbc;

    exports org.locksmith.lock.postgres;

    provides org.locksmith.lock.spi.LockProvider with
            org.locksmith.lock.postgres.PostgresLockProvider;
}
