/**
 * A Spring Integration {@code LockRegistry} over a Locksmith {@code LockClient}: {@code LockRegistryLeaderInitiator},
 * aggregators and {@code executeLocked} on any Locksmith backend. Public: {@link
 * org.locksmith.lock.springintegration.LocksmithLockRegistry} and {@link
 * org.locksmith.lock.springintegration.LocksmithRegistryLock}. Depends on the Locksmith API only; the application
 * chooses the backend.
 *
 * <p>Spring's jars are automatic modules (they carry an {@code Automatic-Module-Name}); Spring Integration is required
 * transitively because the public types implement its interfaces.
 */
@SuppressWarnings({"requires-transitive-automatic", "requires-automatic"})
module org.locksmith.lock.springintegration {
    requires transitive org.locksmith.lock;
    requires transitive spring.integration.core;

    exports org.locksmith.lock.springintegration;
}
