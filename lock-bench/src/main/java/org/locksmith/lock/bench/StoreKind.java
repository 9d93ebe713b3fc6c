package org.locksmith.lock.bench;

/** The four stores Locksmith has a backend for; every contender runs against one of them. */
public enum StoreKind {
    REDIS("Redis"),
    ZOOKEEPER("ZooKeeper"),
    MYSQL("MySQL/MariaDB"),
    POSTGRES("PostgreSQL");

    private final String title;

    StoreKind(String title) {
        this.title = title;
    }

    /** The store's name as the report shows it. */
    public String title() {
        return title;
    }
}
