/**
 * Locksmith's MySQL/MariaDB backend: row locks held by open transactions ({@code row}), a lease table ({@code
 * lease}) and {@code GET_LOCK} named locks ({@code named}), optionally sharded across several databases. Registers
 * the {@code mysql} URL scheme.
 */
module org.locksmith.lock.mysql {
    requires transitive org.locksmith.lock;
    requires transitive java.sql;
    requires com.zaxxer.hikari;
    requires org.locksmith.lock.jdbc;

    exports org.locksmith.lock.mysql;

    provides org.locksmith.lock.spi.LockProvider with
            org.locksmith.lock.mysql.MySqlLockProvider;
}
