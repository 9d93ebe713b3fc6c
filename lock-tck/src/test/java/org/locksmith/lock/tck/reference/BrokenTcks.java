package org.locksmith.lock.tck.reference;

import java.io.IOException;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInfo;
import org.locksmith.lock.LockFeature;

/**
 * Deliberately broken backends, one defect each, for {@link BrokenBackendsTest}. Nested classes: surefire does not
 * run them by itself (they fail, as they should); the meta-test runs them through the JUnit Platform launcher.
 */
final class BrokenTcks {
    private BrokenTcks() {}

    /** Each client has its own store: threads of one client exclude each other, clients do not. */
    static class NoExclusionAcrossClients extends MemoryTck {
        @Override
        String name() {
            return "broken-no-exclusion-across-clients";
        }

        @Override
        boolean storePerClient() {
            return true;
        }
    }

    static class OwnerPerClient extends MemoryTck {
        @Override
        String name() {
            return "broken-owner-per-client";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.OWNER_PER_CLIENT);
        }
    }

    static class ReleaseWithoutOwnerCheck extends MemoryTck {
        @Override
        String name() {
            return "broken-release-without-owner-check";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.RELEASE_WITHOUT_OWNER_CHECK);
        }
    }

    static class TokenRepeatsAfterCrash extends MemoryTck {
        @Override
        String name() {
            return "broken-token-repeats-after-crash";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.TOKEN_RESETS_AFTER_CRASH);
        }
    }

    static class TimedAcquireReturnsEarly extends MemoryTck {
        @Override
        String name() {
            return "broken-timed-acquire-returns-early";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.TIMED_ACQUIRE_RETURNS_EARLY);
        }
    }

    /** tryAcquire() of a held key waits up to 40 ms for the holder: well inside the deadline overshoot. */
    static class TryWaits40Ms extends MemoryTck {
        @Override
        String name() {
            return "broken-try-waits-40ms";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.TRY_WAITS_40MS);
        }
    }

    /** Declares BLOCKING_WAKEUP, but one wait in four misses its wake-up and finds the key free 500 ms later. */
    static class LosesOneWakeupInFour extends MemoryTck {
        @Override
        String name() {
            return "broken-loses-one-wakeup-in-four";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.LOSES_WAKEUPS);
        }
    }

    /** Cuts keys at 255 characters: long keys that differ only past that point share one lock. */
    static class KeysTruncatedAt255 extends MemoryTck {
        @Override
        String name() {
            return "broken-keys-truncated-at-255";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.KEYS_TRUNCATED_AT_255);
        }
    }

    static class TimedAcquireOvershoots extends MemoryTck {
        @Override
        String name() {
            return "broken-timed-acquire-overshoots";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.TIMED_ACQUIRE_OVERSHOOTS);
        }
    }

    /** Declares LEASE_EXPIRY (without renewal) but an abandoned lease never expires. */
    static class NeverExpires extends MemoryTck {
        @Override
        String name() {
            return "broken-never-expires";
        }

        @Override
        Set<LockFeature> features() {
            return WITHOUT_RENEWAL;
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.NEVER_EXPIRES);
        }
    }

    /** Declares BLOCKING_WAKEUP but waiters only notice a release by polling every second. */
    static class Poll30MsWakeup extends MemoryTck {
        @Override
        String name() {
            return "broken-poll-30ms-wakeup";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.POLL_WAKEUP_30MS);
        }
    }

    /** A release from another thread than the acquiring one reports success and frees nothing. */
    static class ReleaseOnAcquiringThreadOnly extends MemoryTck {
        @Override
        String name() {
            return "broken-release-on-acquiring-thread-only";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.RELEASE_ON_ACQUIRING_THREAD_ONLY);
        }
    }

    /** Waits ignore the core's cancellation and end only at their deadline. */
    static class IgnoresCancel extends MemoryTck {
        @Override
        String name() {
            return "broken-ignores-cancel";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.IGNORES_CANCEL);
        }
    }

    /** Declares BLOCKING_WAKEUP, wakes timed waits, but polls every 30 ms for a wait without a deadline. */
    static class PollWithoutDeadline extends MemoryTck {
        @Override
        String name() {
            return "broken-poll-without-deadline";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.POLL_WAKEUP_WITHOUT_DEADLINE);
        }
    }

    /** A correct backend whose TCK class has a storeEntries hook that always says 0: cleanup would pass on nothing. */
    static class StoreEntriesHookNeverMoves extends MemoryTck {
        @Override
        String name() {
            return "broken-store-entries-hook";
        }

        @Override
        protected java.util.OptionalInt storeEntries(String key) {
            return java.util.OptionalInt.of(0);
        }
    }

    /**
     * Declares BLOCKING_WAKEUP but polls every 150 ms: fast enough that a handoff measured at a fixed delay after
     * the waiter's first attempt can land just before a poll, slow enough to dominate any real wake-up.
     */
    static class Poll150MsWakeup extends MemoryTck {
        @Override
        String name() {
            return "broken-poll-150ms-wakeup";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.POLL_WAKEUP_150MS);
        }
    }

    static class LeaksWaiterOnInterrupt extends MemoryTck {
        @Override
        String name() {
            return "broken-leaks-waiter-on-interrupt";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.LEAKS_WAITER_ON_INTERRUPT);
        }
    }

    /** A release during a store outage waits for the store to come back. */
    static class ReleaseWaitsOutOutage extends MemoryTck {
        @Override
        String name() {
            return "broken-release-waits-out-outage";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.RELEASE_WAITS_OUT_OUTAGE);
        }
    }

    /** Declares BLOCKING_WAKEUP, but after an outage its releases wake no waiter (they wake at the lease's end). */
    static class WakeupsLostAfterOutage extends MemoryTck {
        @Override
        String name() {
            return "broken-wakeups-lost-after-outage";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.WAKEUPS_LOST_AFTER_OUTAGE);
        }
    }

    /** Declares FAIR, but an interrupted {@code asLock().lock()} queues again at the back. */
    static class RequeuesOnInterrupt extends MemoryTck {
        @Override
        String name() {
            return "broken-requeues-on-interrupt";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.REQUEUES_ON_INTERRUPT);
        }
    }

    /** An interrupted {@code asLock().lock()} waits on, but returns with its interrupt status cleared. */
    static class SwallowsInterrupt extends MemoryTck {
        @Override
        String name() {
            return "broken-swallows-interrupt";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.SWALLOWS_INTERRUPT);
        }
    }

    /** Declares FAIR but grants the newest waiter first. */
    static class UnfairOrder extends MemoryTck {
        @Override
        String name() {
            return "broken-unfair-order";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.UNFAIR_ORDER);
        }
    }

    /** Folds keys to lower case, as a case-insensitive collation would: "Key" and "key" collide. */
    static class CaseInsensitiveKeys extends MemoryTck {
        @Override
        String name() {
            return "broken-case-insensitive-keys";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.CASE_INSENSITIVE_KEYS);
        }
    }

    /** Declares LOSS_DETECTION, but its renewal never reports a lease that is gone from the store. */
    static class RenewIgnoresLoss extends MemoryTck {
        @Override
        String name() {
            return "broken-renew-ignores-loss";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.RENEW_IGNORES_LOSS);
        }
    }

    /**
     * A restarted store that forgot its locks grants them at once, while a holder's lease (confirmed just before the
     * restart) still runs: two valid holders until the holder's next renewal.
     */
    static class GrantsRightAfterRestart extends MemoryTck {
        @Override
        String name() {
            return "broken-grants-right-after-restart";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.GRANTS_RIGHT_AFTER_RESTART);
        }
    }

    /** Fencing counters that a restart losing the store's data resets: tokens go back while DURABLE_FENCING is declared. */
    static class TokensResetOnEmptyRestart extends MemoryTck {
        @Override
        String name() {
            return "broken-tokens-reset-on-empty-restart";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.TOKENS_RESET_ON_EMPTY_RESTART);
        }
    }

    /** Fails every store call of an interrupted thread, as a virtual thread's socket does. */
    static class CallsFailWhenInterrupted extends MemoryTck {
        @Override
        String name() {
            return "broken-calls-fail-when-interrupted";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.CALLS_FAIL_WHEN_INTERRUPTED);
        }
    }

    /** Starts a pool housekeeper thread per client and never stops it: close leaks a thread of a library. */
    static class LeaksHousekeeperThread extends MemoryTck {
        @Override
        String name() {
            return "broken-leaks-housekeeper-thread";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.LEAKS_HOUSEKEEPER_THREAD);
        }
    }

    /** close() forgets to close the client's connection to the store. */
    static class LeaksConnection extends MemoryTck {
        @Override
        String name() {
            return "broken-leaks-connection";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.LEAKS_CONNECTION);
        }
    }

    /**
     * Declares LEASE_EXPIRY, AUTO_RENEWAL and LOSS_DETECTION, but its renewal reports every lease renewed while the
     * store is unreachable: the store lets the lease expire, the holder is never told.
     */
    static class RenewSwallowsOutage extends MemoryTck {
        @Override
        String name() {
            return "broken-renew-swallows-outage";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.RENEW_SWALLOWS_OUTAGE);
        }
    }

    /**
     * Declares LEASE_EXPIRY and LOSS_DETECTION (no renewal); the store lets leases expire, but the backend tells the
     * core no lease time and never reports the expiry: the lease stays valid and no listener fires.
     */
    static class ExpiresSilently extends MemoryTck {
        @Override
        String name() {
            return "broken-expires-silently";
        }

        @Override
        Set<LockFeature> features() {
            return WITHOUT_RENEWAL;
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.EXPIRES_SILENTLY);
        }
    }

    /** Re-entry counted in the store per client (an owner id per client): threads of one client share the key. */
    static class ReentersPerClient extends MemoryTck {
        @Override
        String name() {
            return "broken-reenters-per-client";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.REENTERS_PER_CLIENT);
        }
    }

    /** Re-entry counted in the store per JVM thread ("uuid:threadId" with one uuid per JVM): two clients used from one
     * thread, or a thread's own detached acquire, share the key. */
    static class ReentersPerThread extends MemoryTck {
        @Override
        String name() {
            return "broken-reenters-per-thread";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.REENTERS_PER_THREAD);
        }
    }

    /** A timed wait passes whole seconds to a store call that takes milliseconds: a 10 s wait gives up after 10 ms. */
    static class WaitTimeoutInWrongUnit extends MemoryTck {
        @Override
        String name() {
            return "broken-wait-timeout-in-wrong-unit";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.WAIT_TIMEOUT_IN_WRONG_UNIT);
        }
    }

    /** Declares SESSION_BOUND, but re-creates a killed session's locks under its new session: they never free. */
    static class KilledSessionLocksRestored extends MemoryTck {
        @Override
        String name() {
            return "broken-killed-session-locks-restored";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.KILLED_SESSION_LOCKS_RESTORED);
        }
    }

    /** Waits in an uninterruptible blocking store call of up to 5 s without a cancel action: close() and cancellation
     * wait for that call to end. */
    static class UncancellableStoreWait extends MemoryTck {
        @Override
        String name() {
            return "broken-uncancellable-store-wait";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.UNCANCELLABLE_STORE_WAIT);
        }
    }

    /** Writes releases behind, 100 ms later, and drops what is still queued on close: close() leaves its leases held. */
    static class ReleasesWriteBehind extends MemoryTck {
        @Override
        String name() {
            return "broken-releases-write-behind";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.RELEASES_WRITE_BEHIND);
        }
    }

    /** A key column in a 3-byte UTF-8 charset: keys with an emoji (or any supplementary character) fail in the store. */
    static class KeysWithoutSupplementaryCharacters extends MemoryTck {
        @Override
        String name() {
            return "broken-keys-without-supplementary-characters";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.KEYS_WITHOUT_SUPPLEMENTARY_CHARACTERS);
        }
    }

    /** Marks the queue record of a waiter that gave up abandoned instead of deleting it: one record per waiter, forever. */
    static class KeepsAbandonedWaiterRecords extends MemoryTck {
        @Override
        String name() {
            return "broken-keeps-abandoned-waiter-records";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.KEEPS_ABANDONED_WAITER_RECORDS);
        }
    }

    /** A wait that reaches its deadline leaves its queue entry: the ghost keeps every later acquire of the key out. */
    static class LeaksWaiterOnTimeout extends MemoryTck {
        @Override
        String name() {
            return "broken-leaks-waiter-on-timeout";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.LEAKS_WAITER_ON_TIMEOUT);
        }
    }

    /** Correct, but leased without renewal: the reference for the in-JVM expiry contract. */
    static class ReferenceWithoutRenewal extends MemoryTck {
        @Override
        String name() {
            return "reference-memory-unrenewed";
        }

        @Override
        Set<LockFeature> features() {
            return WITHOUT_RENEWAL;
        }
    }

    /** Correct, declaring only BLOCKING_WAKEUP: the TCK checks the undeclared sides (re-entry, fencing). */
    static class ReferenceMinimal extends MemoryTck {
        @Override
        String name() {
            return "reference-memory-minimal";
        }

        @Override
        Set<LockFeature> features() {
            return EnumSet.of(LockFeature.BLOCKING_WAKEUP);
        }
    }

    static final Set<LockFeature> WITHOUT_RENEWAL;

    static {
        EnumSet<LockFeature> f = EnumSet.copyOf(MemoryLockBackend.ALL);
        f.remove(LockFeature.AUTO_RENEWAL);
        WITHOUT_RENEWAL = f;
    }

    /**
     * A broken variant of the file backend, in a directory of its own: the reference's is removed once the
     * reference's own run is over, and variants must not see each other's state.
     */
    abstract static class FileVariant extends FileReferenceTckTest {
        private static final Map<Class<?>, Path> DIRS = new ConcurrentHashMap<>();

        /** The URL's parameters, {@code leaseMs} included. */
        abstract String parameters();

        /** The kit's lease and the file backend's {@code defect} (a {@code FileLockBackend.Defect}, in URL form). */
        String withDefect(String defect) {
            return "leaseMs=" + timings().leaseTime().toMillis() + "&defect=" + defect;
        }

        @Override
        Path dir() {
            return FileReferenceTckTest.ensure(
                    DIRS.computeIfAbsent(getClass(), c -> FileReferenceTckTest.newDirectory()));
        }

        @Override
        String url() {
            return "file://" + dir() + "?" + parameters();
        }

        @AfterAll
        static void removeOwnDirectory(TestInfo info) throws IOException {
            Path dir = DIRS.remove(info.getTestClass().orElseThrow());
            if (dir != null) {
                FileReferenceTckTest.removeTree(dir);
            }
        }
    }

    /**
     * The file backend, whose leases the store keeps for L, declaring 3 L: a holder paused past L resumes still
     * valid while another process holds the key.
     */
    static class FileDeclaresLongerLease extends FileVariant {
        @Override
        String parameters() {
            return "leaseMs=" + timings().leaseTime().toMillis() + "&declaredLeaseMs="
                    + timings().leaseTime().multipliedBy(3).toMillis();
        }
    }

    /** The file backend taking over an expired lease outside its file lock: racing contenders are all granted. */
    static class FileRacyTakeover extends FileVariant {
        @Override
        String parameters() {
            return withDefect("racy-takeover");
        }
    }

    /** The file backend giving the expired holder's fencing token to whoever takes over its key. */
    static class FileTokenReusedOnTakeover extends FileVariant {
        @Override
        String parameters() {
            return withDefect("token-reused-on-takeover");
        }
    }

    /**
     * The file backend keeping unrenewed leases half again as long as the lease it declares: within the 1.5 leases
     * the crash bound once allowed, outside lease + renewal interval + hand-off.
     */
    static class FileKeepsLeasesHalfAgainAsLong extends FileVariant {
        @Override
        String parameters() {
            return "leaseMs="
                    + timings().leaseTime().multipliedBy(3).dividedBy(2).toMillis() + "&declaredLeaseMs="
                    + timings().leaseTime().toMillis();
        }
    }

    /**
     * The file backend declaring BLOCKING_WAKEUP while it wakes only the waiters of its own JVM: waiters in other
     * processes poll every 150 ms.
     */
    static class FileLocalWakeupOnly extends FileVariant {
        @Override
        String parameters() {
            return withDefect("local-wakeup-only");
        }
    }

    /**
     * The file backend keeping its lock table in a map of its own JVM (the files written through, never read): threads
     * of one process exclude each other, worker processes do not.
     */
    static class FileProcessLocalLockTable extends FileVariant {
        @Override
        String parameters() {
            return withDefect("process-local-lock-table");
        }
    }

    /**
     * The file backend reading each key's state file once and then trusting a cache of its own JVM that only its own
     * writes update: caught by c01_mutualExclusion_workerProcesses only since its workers start together and let
     * each other in between their rounds.
     */
    static class FileProcessLocalStateCache extends FileVariant {
        @Override
        String parameters() {
            return withDefect("process-local-state-cache");
        }
    }

    /**
     * The file backend with a queue that hands a released key to the first waiter, held without a lease until that
     * waiter claims it: a waiter frozen in its wait keeps the key.
     */
    static class FileHandoffWithoutLease extends FileVariant {
        @Override
        String parameters() {
            return withDefect("handoff-without-lease");
        }
    }

    /**
     * The file backend declaring SESSION_BOUND with the kit's session timeout, while the store frees a dead
     * process's key only when its lease, ten session timeouts, runs out (renewed every third of the session, as the
     * core requires): caught up to a time factor of about 6.
     */
    static class FileDeclaresSessionBound extends FileVariant {
        @Override
        String parameters() {
            return "leaseMs="
                    + timings().sessionTimeout().multipliedBy(10).toMillis() + "&sessionMs="
                    + timings().sessionTimeout().toMillis() + "&defect=declares-session-bound";
        }
    }

    /** The correct file backend in a directory of its own, for reference runs inside the meta-test. */
    static class FileReference extends FileVariant {
        @Override
        String parameters() {
            return "leaseMs=" + timings().leaseTime().toMillis();
        }
    }

    /**
     * Correct: the file backend declaring SESSION_BOUND with the kit's session timeout, whose leases (three quarters
     * of it) free a dead process's key well within that session.
     */
    static class FileSessionBoundWithinSession extends FileVariant {
        @Override
        String parameters() {
            return "leaseMs="
                    + timings().sessionTimeout().multipliedBy(3).dividedBy(4).toMillis() + "&sessionMs="
                    + timings().sessionTimeout().toMillis() + "&defect=declares-session-bound";
        }
    }

    /** The reference as a {@code @ParameterizedClass}, one backend name per configuration: one report each. */
    @org.junit.jupiter.params.ParameterizedClass
    @org.junit.jupiter.params.provider.ValueSource(strings = {"one", "two"})
    static class ParameterizedReference extends MemoryTck {
        @org.junit.jupiter.params.Parameter
        String configuration;

        @Override
        String name() {
            return "reference-memory-param-" + configuration;
        }
    }

    /** Declares BLOCKING_WAKEUP, but every second release notifies no waiter: a waiter that missed one re-checks 500 ms on. */
    static class DropsAlternateReleaseNotifications extends MemoryTck {
        @Override
        String name() {
            return "broken-drops-alternate-release-notifications";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.DROPS_ALTERNATE_RELEASE_NOTIFICATIONS);
        }
    }

    /** Keeps a key's wait queue under the key plus ":w", in the name space of the locks. */
    static class QueueUnderDerivedName extends MemoryTck {
        @Override
        String name() {
            return "broken-queue-under-derived-name";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.QUEUE_UNDER_DERIVED_NAME);
        }
    }

    /** Starts a listener thread per wait and leaves it running when close() cancels the wait. */
    static class LeaksListenerOfCancelledWaiter extends MemoryTck {
        @Override
        String name() {
            return "broken-leaks-listener-of-cancelled-waiter";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.LEAKS_LISTENER_OF_CANCELLED_WAITER);
        }
    }

    /** Hands a released key to the first waiter in the store; a waiter giving up at that moment leaves it granted to nobody. */
    static class OrphansRacedHandoff extends MemoryTck {
        @Override
        String name() {
            return "broken-orphans-raced-handoff";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.ORPHANS_RACED_HANDOFF);
        }
    }

    /** Declares FAIR, but keeps eight queue places; later waiters take them newest first. */
    static class QueueOfEight extends MemoryTck {
        @Override
        String name() {
            return "broken-queue-of-eight";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.QUEUE_OF_EIGHT);
        }
    }

    /** Draws the fencing token when the request starts, in a call of its own, not when the key is granted. */
    static class TokenStampedAtRequest extends MemoryTck {
        @Override
        String name() {
            return "broken-token-stamped-at-request";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.TOKEN_STAMPED_AT_REQUEST);
        }
    }

    // ---- Lease ends: abandoned holders, stale releases, renewals racing releases ----

    /** The store keeps unrenewed leases 30% longer than declared; no worker hooks, so only the in-JVM abandon shows it. */
    static class StoreKeepsLeasesLonger extends MemoryTck {
        @Override
        String name() {
            return "broken-store-keeps-leases-longer";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.STORE_KEEPS_LEASES_LONGER);
        }
    }

    /** The store keeps leases a quarter shorter than declared: the core trusts a lease the store dropped. */
    static class StoreKeepsLeasesShorter extends MemoryTck {
        @Override
        String name() {
            return "broken-store-keeps-leases-shorter";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.STORE_KEEPS_LEASES_SHORTER);
        }
    }

    /** Waiters hear of releases only: an expired key is found free at the waiter's deadline. */
    static class WaiterBlindToExpiry extends MemoryTck {
        @Override
        String name() {
            return "broken-waiter-blind-to-expiry";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.WAITER_BLIND_TO_EXPIRY);
        }
    }

    /** A release whose lease ran out in the store frees the key without the owner check. */
    static class ReleaseUncheckedOnceExpired extends MemoryTck {
        @Override
        String name() {
            return "broken-release-unchecked-once-expired";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.RELEASE_UNCHECKED_ONCE_EXPIRED);
        }
    }

    /** Renewals reported at once and written 30 ms later as an upsert: a release in between is undone. */
    static class RenewalWrittenLate extends MemoryTck {
        @Override
        String name() {
            return "broken-renewal-written-late";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.RENEWAL_WRITTEN_LATE);
        }
    }

    /** After a failed renewal, releases skip the owner check. */
    static class ReleaseUncheckedAfterFailedRenewal extends MemoryTck {
        @Override
        String name() {
            return "broken-release-unchecked-after-failed-renewal";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.RELEASE_UNCHECKED_AFTER_FAILED_RENEWAL);
        }
    }

    /** SESSION_BOUND without leases, but close() leaves the session's locks taken: an abandoned client's keys never free. */
    static class CloseKeepsSessionLocks extends MemoryTck {
        @Override
        String name() {
            return "broken-close-keeps-session-locks";
        }

        @Override
        Set<LockFeature> features() {
            return SESSION_ONLY;
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.CLOSE_KEEPS_SESSION_LOCKS);
        }
    }

    /** Correct, SESSION_BOUND without leases or renewal: the reference for an abandoned session-bound client. */
    static class ReferenceSessionOnly extends MemoryTck {
        @Override
        String name() {
            return "reference-memory-session-only";
        }

        @Override
        Set<LockFeature> features() {
            return SESSION_ONLY;
        }
    }

    static final Set<LockFeature> SESSION_ONLY;

    static {
        EnumSet<LockFeature> f = EnumSet.copyOf(MemoryLockBackend.ALL);
        f.remove(LockFeature.AUTO_RENEWAL);
        f.remove(LockFeature.LEASE_EXPIRY);
        SESSION_ONLY = f;
    }

    /** Renews its leases one after another in grant order: a stalled first lease holds up the renewal of the rest. */
    static class RenewsOneAfterAnother extends MemoryTck {
        @Override
        String name() {
            return "broken-renews-one-after-another";
        }

        @Override
        Set<MemoryLockBackend.Defect> defects() {
            return Set.of(MemoryLockBackend.Defect.RENEWS_ONE_AFTER_ANOTHER);
        }
    }
}
