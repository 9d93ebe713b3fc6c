package org.locksmith.lock.jdbc.internal;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Opens one connection for work other than a lock (the first I/O of a backend: server checks, schema creation). It
 * may block past any timeout of its own, so {@link FirstConnection#open} calls it with a deadline.
 */
@FunctionalInterface
public interface Connector {
    /** A new connection, which the caller closes. */
    Connection connect() throws SQLException;
}
