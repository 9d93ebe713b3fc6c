/**
 * A ShedLock {@code LockProvider} over a Locksmith {@code LockClient}: {@code @SchedulerLock} jobs run under any
 * Locksmith backend. Public: {@link org.locksmith.lock.shedlock.LocksmithLockProvider}. Depends on the Locksmith API
 * only; the application chooses the backend.
 */
module org.locksmith.lock.shedlock {
    requires transitive org.locksmith.lock;
    requires transitive net.javacrumbs.shedlock.core;

    exports org.locksmith.lock.shedlock;
}
