package org.locksmith.lock.mysql;

import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;

/**
 * Run by {@link MySqlDriverMissingTest} in a JVM whose class path lacks every JDBC driver: opens a {@code mysql://}
 * URL and prints what it got, {@code OPENED} or {@code FAILED <exception class>: <message>}.
 */
public final class DriverlessOpen {
    private DriverlessOpen() {}

    public static void main(String[] args) {
        try (LockClient client = Locks.open(args[0])) {
            System.out.println("OPENED " + client.backend());
        } catch (RuntimeException e) {
            System.out.println("FAILED " + e.getClass().getName() + ": " + e.getMessage());
        }
    }
}
