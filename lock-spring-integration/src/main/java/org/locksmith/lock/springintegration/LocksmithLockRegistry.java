package org.locksmith.lock.springintegration;

import java.time.Duration;
import java.util.Objects;
import org.locksmith.lock.LockClient;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * A Spring Integration {@link LockRegistry} (and {@link RenewableLockRegistry}) over a Locksmith {@link LockClient},
 * so that {@code LockRegistryLeaderInitiator}, aggregators, {@code executeLocked} and anything else written against
 * a lock registry run unchanged on any Locksmith backend:
 *
 * <pre>{@code
 * @Bean
 * LocksmithLockRegistry lockRegistry(LockClient locks) {
 *     return new LocksmithLockRegistry(locks);          // key "orders" is the Locksmith key "spring-integration:orders"
 * }
 *
 * @Bean
 * LockRegistryLeaderInitiator leaderInitiator(LocksmithLockRegistry registry) {
 *     return new LockRegistryLeaderInitiator(registry);
 * }
 * }</pre>
 *
 * <p><b>Locks.</b> {@link #obtain(Object)} returns a {@link LocksmithRegistryLock} for the key {@code keyPrefix +
 * lockKey}: a {@link java.util.concurrent.locks.Lock} owned by the pair (client, thread) and reentrant where the
 * client declares {@link org.locksmith.lock.LockFeature#REENTRANT}, exactly like the locks of Spring's own
 * {@code RedisLockRegistry} and {@code JdbcLockRegistry}: two threads of one registry exclude each other as two
 * registries on two clients do. Obtaining does no I/O and keeps no state; the only state is the locks taken with a
 * time to live, which {@link #expireUnusedOlderThan(long)} forgets once they ended unreleased.
 *
 * <p><b>Time to live.</b> As with Spring's registries, a lock taken with {@link LocksmithRegistryLock#lock(Duration)}
 * or {@link LocksmithRegistryLock#tryLock(Duration, Duration)} ends at its time to live unless unlocked before (or its
 * end moved by {@link #renewLock(Object, Duration)}): Locksmith renews its lease until then, and a timer releases it at
 * the end, after which the holder sees it as lost. A lock taken through the plain {@link java.util.concurrent.locks.Lock}
 * methods has no time to live: Locksmith renews it for as long as its holder holds it, and frees the lock of a crashed
 * holder after the client's lease time ({@code leaseMs}) or at the end of its session. {@link
 * #setRenewalTaskScheduler} is not needed (the inherited no-op).
 *
 * <p><b>Fencing and loss.</b> {@link LocksmithRegistryLock#lease()} gives the thread that holds a lock its Locksmith
 * lease: the fencing token to pass to the resource it protects, {@code isValid()}, and {@code onLost(...)}.
 * {@link java.util.concurrent.locks.Lock#unlock()} of a lock lost meanwhile throws {@link
 * org.locksmith.lock.LockLostException} (the hold is released all the same), which {@code LockRegistryLeaderInitiator}
 * treats as a revoked leadership.
 *
 * <p>This class is thread-safe. It does not own the client: close the client when the application stops.
 */
public final class LocksmithLockRegistry
        implements RenewableLockRegistry<LocksmithRegistryLock>, ExpirableLockRegistry<LocksmithRegistryLock> {

    /** The prefix of every key, unless another is given. */
    public static final String DEFAULT_KEY_PREFIX = "spring-integration:";

    private final LockClient client;
    private final String keyPrefix;
    private final TtlHolds ttlHolds = new TtlHolds();

    /**
     * A registry whose lock key {@code k} is the Locksmith key {@code "spring-integration:" + k} of {@code client}.
     *
     * @param client the client whose locks this registry hands out; it stays the caller's to close
     * @throws NullPointerException if client is null
     */
    public LocksmithLockRegistry(LockClient client) {
        this(client, DEFAULT_KEY_PREFIX);
    }

    /**
     * A registry whose lock key {@code k} is the Locksmith key {@code keyPrefix + k} of {@code client}.
     *
     * @param client the client whose locks this registry hands out; it stays the caller's to close
     * @param keyPrefix may be empty, to share keys with code that locks them through the client directly
     * @throws NullPointerException if an argument is null
     */
    public LocksmithLockRegistry(LockClient client, String keyPrefix) {
        this.client = Objects.requireNonNull(client, "client");
        this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
    }

    /**
     * The lock for {@code lockKey}. Does no I/O.
     *
     * @param lockKey a {@link String}, as Spring's own registries require
     * @throws IllegalArgumentException if lockKey is not a String, or the key it makes is empty, longer than {@value
     *     org.locksmith.lock.Locks#MAX_KEY_LENGTH} characters, or not well-formed UTF-16
     * @throws NullPointerException if lockKey is null
     * @throws IllegalStateException if the client is closed
     */
    @Override
    public LocksmithRegistryLock obtain(Object lockKey) {
        return new LocksmithRegistryLock(client.lock(key(lockKey)), ttlHolds);
    }

    /**
     * Checks that the current thread holds the lock for {@code lockKey} with a valid lease. Nothing more is needed:
     * Locksmith renews held leases in the background. No I/O.
     *
     * @throws IllegalStateException if the current thread does not hold it through this registry's client, or its
     *     lease is no longer valid (lost, not confirmed in time, or its time to live ran out)
     * @throws IllegalArgumentException if lockKey is not a String
     * @throws NullPointerException if lockKey is null
     */
    @Override
    public void renewLock(Object lockKey) {
        String key = key(lockKey);
        TtlHolds.Hold hold = ttlHolds.mine(key);
        if (hold != null ? hold.ended() : !client.lock(key).isHeldByCurrentThread()) {
            throw notHeld(key);
        }
    }

    /**
     * {@link #renewLock(Object)}; for a lock the current thread took with a time to live ({@link
     * LocksmithRegistryLock#lock(Duration)}), its end moves to {@code ttl} from now. A lock taken without one has no
     * end to move (Locksmith renews it until unlock). No I/O.
     *
     * @throws IllegalArgumentException if ttl is not positive, or lockKey is not a String
     * @throws NullPointerException if an argument is null
     * @throws IllegalStateException as {@link #renewLock(Object)}
     */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        LocksmithRegistryLock.checkTtl(ttl);
        String key = key(lockKey);
        TtlHolds.Hold hold = ttlHolds.mine(key);
        if (hold == null) {
            renewLock(lockKey);
            return;
        }
        if (hold.ended()) {
            throw notHeld(key);
        }
        hold.extend(ttl);
    }

    /**
     * Spring's {@code ExpirableLockRegistry}: forgets the locks taken with a time to live that ended more than {@code
     * age} milliseconds ago and were never unlocked (a later {@code unlock()} of one then throws {@link
     * IllegalMonitorStateException} instead of {@link org.locksmith.lock.LockLostException}). Held locks and locks
     * obtained but not held are not affected: {@link #obtain(Object)} keeps no state, so nothing else grows. No I/O.
     *
     * @param age in milliseconds
     */
    @Override
    public void expireUnusedOlderThan(long age) {
        ttlHolds.expireEndedBefore(age);
    }

    private static IllegalStateException notHeld(String key) {
        return new IllegalStateException("The current thread does not hold the lock '" + key
                + "' with a valid lease: it was never acquired, was released, was lost, or its time to live ran out");
    }

    private String key(Object lockKey) {
        Objects.requireNonNull(lockKey, "lockKey");
        if (!(lockKey instanceof String)) {
            throw new IllegalArgumentException(
                    "Lock keys must be Strings, got " + lockKey.getClass().getName());
        }
        return keyPrefix + lockKey;
    }

    @Override
    public String toString() {
        return "LocksmithLockRegistry{" + client.backend() + ", prefix='" + keyPrefix + "'}";
    }
}
