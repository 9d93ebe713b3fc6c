/** Locksmith's Micrometer binder: a client's lock events as meters. */
module org.locksmith.lock.micrometer {
    requires transitive org.locksmith.lock;
    requires transitive micrometer.core;

    exports org.locksmith.lock.micrometer;
}
