/**
 * Internal code that Locksmith's JDBC backends share (statement cancellation, uninterruptible store calls, the first
 * connection within a deadline, leases held by a connection, common options, SQL scripts). Not API: its one package
 * is exported to those backends only, and it may change in any release.
 */
module org.locksmith.lock.jdbc {
    requires transitive org.locksmith.lock;
    requires transitive java.sql;

    exports org.locksmith.lock.jdbc.internal to
            org.locksmith.lock.mysql,
            org.locksmith.lock.postgres;
}
