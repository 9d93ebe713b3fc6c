/**
 * Locksmith's neutral lock API ({@code org.locksmith.lock}), the backend SPI ({@code org.locksmith.lock.spi}), and
 * the shared core, which stays internal.
 */
module org.locksmith.lock {
    requires jdk.jfr; // the core's flight recorder events (LockEvents); off unless a recording enables them

    exports org.locksmith.lock;
    exports org.locksmith.lock.spi;

    uses org.locksmith.lock.spi.LockProvider;
}
