package org.locksmith.lock.tck;

import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.tck.TckGates.ChecksUndeclared;
import org.locksmith.lock.tck.TckGates.Hook;
import org.locksmith.lock.tck.TckGates.RequiresFault;
import org.locksmith.lock.tck.TckGates.RequiresFeature;
import org.locksmith.lock.tck.TckGates.RequiresHook;
import org.locksmith.lock.tck.internal.AsyncCloseContract;
import org.locksmith.lock.tck.internal.CloseContract;
import org.locksmith.lock.tck.internal.DeadlineContract;
import org.locksmith.lock.tck.internal.DerivedNamesContract;
import org.locksmith.lock.tck.internal.DetachedContract;
import org.locksmith.lock.tck.internal.FairnessContract;
import org.locksmith.lock.tck.internal.FaultLoadContract;
import org.locksmith.lock.tck.internal.FencingContract;
import org.locksmith.lock.tck.internal.HandoffContract;
import org.locksmith.lock.tck.internal.IndependentRenewalContract;
import org.locksmith.lock.tck.internal.KeyContract;
import org.locksmith.lock.tck.internal.LeaseContract;
import org.locksmith.lock.tck.internal.LeaseEndContract;
import org.locksmith.lock.tck.internal.MutualExclusionContract;
import org.locksmith.lock.tck.internal.OwnershipContract;
import org.locksmith.lock.tck.internal.StoreContract;
import org.locksmith.lock.tck.internal.StoreRestartContract;
import org.locksmith.lock.tck.internal.TckEnv;

/**
 * The Locksmith technology compatibility kit. A backend proves itself by extending this class in its tests and
 * returning a fresh client from {@link #newClient()}; {@code mvn test} then runs every contract of
 * {@code lock-tck/CONTRACTS.md} against it, gated by the features the client declares. Tests of undeclared features
 * are skipped with a reason starting {@code "not declared: FEATURE"}; tests that need a hook (fault, worker processes,
 * store view) the backend does not offer are skipped with a reason starting {@code "needs "}, and their contract
 * reads "unverified", never "pass". Where a feature is not declared, the TCK checks that what depends on it
 * fails clearly (for example {@code fencingToken()} throws {@link UnsupportedOperationException}).
 *
 * <p>Test names follow the contract numbers: {@code c01_mutualExclusion_...}, {@code c10_fencing_...}. Every
 * failure message starts with {@code [cNN Contract | backend=... | key='...' | client=...]}. Each test uses keys with
 * a random prefix, so runs against shared servers never collide.
 *
 * <p>Each run writes {@code <backend>--<TestClass>.json} and regenerates {@code semantics.md} (every backend run in
 * the build, contract by contract) in the directory named by the JUnit configuration parameter or system property
 * {@code locksmith.tck.reportDir} (default {@code target/locksmith-tck}). Time allowances stretch with
 * {@link TckTimings#FACTOR_PROPERTY} / {@link TckTimings#FACTOR_ENVIRONMENT_VARIABLE}.
 *
 * <p>Tests run one at a time (the TCK measures latencies); each one is bounded by a two minute timeout. With JUnit's
 * parallel execution enabled ({@code junit.jupiter.execution.parallel.enabled=true}, for example in {@code
 * src/test/resources/junit-platform.properties}), the tests marked {@code @Execution(CONCURRENT)} run at the same
 * time as each other, and every other test still runs alone ({@code CONTRACTS.md} says which and why); a run of this
 * repository's PostgreSQL backend then takes 69-76 s on a 2-core machine, of which about 44 s are the tests that run
 * alone. Keep the default per-method test instance
 * lifecycle. With the system property {@value TckThreads#PROPERTY}{@code =virtual} (Java 21+) every test uses the
 * client from virtual threads.
 */
@ExtendWith({TckReport.class, TckThreads.class, TckGates.class})
@Timeout(120)
@Execution(ExecutionMode.SAME_THREAD) // latencies are measured: see TckSchedule for the tests that may overlap
@ResourceLock(providers = TckSchedule.class)
@TestMethodOrder(TckSchedule.Order.class)
public abstract class LockTck {

    private TckEnv env;
    private volatile String lastBackend;
    private volatile Set<LockFeature> lastFeatures;

    /**
     * A new client of the backend under test, connected to the store, configured with the times in {@link
     * #timings()} (short leases for tests). Called many times; the TCK closes every client it gets.
     */
    protected abstract LockClient newClient();

    /**
     * A URL for {@link org.locksmith.lock.Locks#open(String)} that opens the same kind of client from a separate
     * JVM started with this JVM's class path; empty to skip the multi-process contracts.
     */
    protected Optional<String> workerUrl() {
        return Optional.empty();
    }

    /** The faults this backend's test can inflict; {@link LockFaults#NONE} by default. */
    protected LockFaults faults() {
        return LockFaults.NONE;
    }

    /**
     * How many records the store keeps for {@code key} right now, waiters included (the hash and wake-up list in
     * Redis, lock and waiter nodes in ZooKeeper, rows in MySQL); empty if the test cannot look. The cleanup and
     * interruption contracts use it to prove that released keys and abandoned waiters leave bounded state.
     */
    protected OptionalInt storeEntries(String key) {
        return OptionalInt.empty();
    }

    /**
     * How many connections (sockets, sessions) to the store the clients of this test class hold right now, counted
     * where the store can see them if possible: {@code CLIENT LIST} entries with your clients' names in Redis, rows
     * of your user in MySQL's processlist, {@code cons} in ZooKeeper, or a pool's open connections; empty if the
     * test cannot count them. The close contract checks that closing clients brings the count back to what it was
     * before they were opened.
     */
    protected OptionalInt openConnections() {
        return OptionalInt.empty();
    }

    /**
     * A counter of the requests the store has served so far, read from the store where possible (Redis {@code INFO
     * stats} total_commands_processed, ZooKeeper {@code srvr} "Received", MySQL's {@code Questions} status), summed
     * over its nodes; counting other clients' requests too is fine, as long as nothing else uses the store during
     * the test. Empty if the test cannot count them. The progress contract uses it to prove that an idle waiter of a
     * backend declaring {@code BLOCKING_WAKEUP} does not poll.
     */
    protected OptionalLong storeOperations() {
        return OptionalLong.empty();
    }

    /** The times the clients are configured with and the allowances granted; {@link TckTimings#defaults()}. */
    protected TckTimings timings() {
        return TckTimings.defaults();
    }

    @BeforeEach
    final void openTckEnv(TestInfo info) {
        if (env != null) {
            throw new IllegalStateException(
                    "two TCK tests share one instance of " + getClass().getName()
                            + ": with parallel execution, keep JUnit's default per-method test instance lifecycle");
        }
        String name = info.getTestMethod().map(m -> m.getName()).orElse(info.getDisplayName());
        env = new TckEnv(
                new TckEnv.Hooks() {
                    @Override
                    public LockClient newClient() {
                        return LockTck.this.newClient();
                    }

                    @Override
                    public Optional<String> workerUrl() {
                        return LockTck.this.workerUrl();
                    }

                    @Override
                    public LockFaults faults() {
                        return LockTck.this.faults();
                    }

                    @Override
                    public OptionalInt storeEntries(String key) {
                        return LockTck.this.storeEntries(key);
                    }

                    @Override
                    public OptionalInt openConnections() {
                        return LockTck.this.openConnections();
                    }

                    @Override
                    public OptionalLong storeOperations() {
                        return LockTck.this.storeOperations();
                    }

                    @Override
                    public TckTimings timings() {
                        return LockTck.this.timings();
                    }
                },
                name);
    }

    @AfterEach
    final void closeTckEnv() {
        TckEnv e = env;
        env = null;
        if (e != null) {
            e.close();
            if (!"?".equals(e.backend())) {
                lastBackend = e.backend();
                lastFeatures = e.features();
            }
            notes = Map.copyOf(e.notes());
        }
    }

    private volatile Map<String, String> notes = Map.of();

    /** How a failure of the running test names its contract and backend; null outside a test. */
    String failurePrefix() {
        TckEnv e = env;
        return e == null ? null : e.at();
    }

    /** The running test's environment, for {@link TckGates}; null outside a test. */
    TckEnv env() {
        return env;
    }

    String reportedBackend() {
        return lastBackend;
    }

    Set<LockFeature> reportedFeatures() {
        return lastFeatures;
    }

    Map<String, String> reportedNotes() {
        return notes;
    }

    // ---- c01 Mutual exclusion -------------------------------------------------------------------------------

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    public void c01_mutualExclusion_threadsOfOneClient() throws Exception {
        new MutualExclusionContract(env).threadsOfOneClient();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    public void c01_mutualExclusion_severalClients() throws Exception {
        new MutualExclusionContract(env).severalClients();
    }

    @Test
    public void c01_mutualExclusion_stress8Clients200Each() throws Exception {
        new MutualExclusionContract(env).stress();
    }

    @Test
    public void c01_mutualExclusion_workerProcesses() throws Exception {
        new MutualExclusionContract(env).workerProcesses();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    @TckSchedule.LongWait
    public void c01_mutualExclusion_killedWorkerHolder() throws Exception {
        new MutualExclusionContract(env).killedWorkerHolder();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    @TckSchedule.LongWait
    public void c01_mutualExclusion_pausedHolderNeverValidWhileAnotherHolds() throws Exception {
        new MutualExclusionContract(env).pausedHolderNeverValidWhileAnotherHolds();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    @TckSchedule.LongWait
    public void c01_mutualExclusion_pausedWaiterNeitherKeepsNorShares() throws Exception {
        new MutualExclusionContract(env).pausedWaiterNeitherKeepsNorShares();
    }

    @Test
    @RequiresFault(LockFaults.Fault.RESTART_STORE)
    public void c01_mutualExclusion_holderAcrossStoreRestart() throws Exception {
        new StoreRestartContract(env, LockFaults.Fault.RESTART_STORE).holderNeverValidWhileAnotherHoldsAcrossRestart();
    }

    @Test
    @RequiresFault(LockFaults.Fault.RESTART_STORE_EMPTY)
    public void c01_mutualExclusion_holderAcrossEmptyStoreRestart() throws Exception {
        new StoreRestartContract(env, LockFaults.Fault.RESTART_STORE_EMPTY)
                .holderNeverValidWhileAnotherHoldsAcrossRestart();
    }

    /** Stochastic (random entry points and fault targets); the seed is in the report. */
    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    @TckSchedule.LongWait
    public void c01_mutualExclusion_randomisedContentionUnderKillsAndPauses() throws Exception {
        new FaultLoadContract(env).validityIntervalsNeverOverlapUnderKillsAndPauses();
    }

    // ---- c02 Progress ---------------------------------------------------------------------------------------

    @Test
    @RequiresFeature(LockFeature.BLOCKING_WAKEUP)
    @RequiresHook(Hook.STORE_OPERATIONS)
    public void c02_progress_idleWaiterDoesNotPoll() throws Exception {
        new MutualExclusionContract(env).idleWaiterDoesNotPoll();
    }

    @Test
    public void c02_progress_freeKeyGrantedInOneAttempt() throws Exception {
        new MutualExclusionContract(env).freeKeyGrantedInOneAttempt();
    }

    @Test
    public void c02_progress_handoffLatency() throws Exception {
        new MutualExclusionContract(env).handoffLatency();
    }

    @Test
    public void c02_progress_handoffToWorkerProcess() throws Exception {
        new MutualExclusionContract(env).workerHandoffLatency();
    }

    @Test
    public void c02_progress_noLostWakeupsWithVariedReleases() throws Exception {
        new HandoffContract(env).noLostWakeupsWithVariedReleases();
    }

    @Test
    public void c02_progress_noOrphanedGrantWhenGivingUpRacesTheRelease() throws Exception {
        new HandoffContract(env).noOrphanedGrantWhenGivingUpRacesTheRelease();
    }

    // ---- c03 Reentrancy -------------------------------------------------------------------------------------

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    @RequiresFeature(LockFeature.REENTRANT)
    public void c03_reentrancy_holdCountsAndReleaseOrder() throws Exception {
        new OwnershipContract(env).holdCountsAndReleaseOrder();
    }

    @Test
    @ChecksUndeclared(LockFeature.REENTRANT)
    public void c03_reentrancy_undeclaredReentryFailsClearly() throws Exception {
        new OwnershipContract(env).reentryFailsClearlyWhenUndeclared();
    }

    // ---- c04 Ownership --------------------------------------------------------------------------------------

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    public void c04_ownership_releaseByAnotherThreadFails() throws Exception {
        new OwnershipContract(env).releaseByAnotherThreadFails();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    public void c04_ownership_otherClientCannotRelease() throws Exception {
        new OwnershipContract(env).otherClientCannotRelease();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    public void c04_ownership_staleReleaseDoesNotFreeNewHolder() throws Exception {
        new OwnershipContract(env).staleReleaseDoesNotFreeNewHolder();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    public void c04_ownership_staleReleaseDoesNotFreeSameClientsOtherThread() throws Exception {
        new OwnershipContract(env).staleReleaseDoesNotFreeSameClientsOtherThread();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    @TckSchedule.LongWait
    public void c04_ownership_staleReleaseAfterEveryWayOfLoss() throws Exception {
        new LeaseEndContract(env).staleReleaseAfterEveryWayOfLoss();
    }

    @Test
    @RequiresFeature(LockFeature.LEASE_EXPIRY)
    @RequiresFault(LockFaults.Fault.STORE_OUTAGE)
    public void c04_ownership_staleReleaseAfterOutage() throws Exception {
        new LeaseEndContract(env).staleReleaseAfterOutage();
    }

    // ---- c05 Deadlines --------------------------------------------------------------------------------------

    @Test
    public void c05_deadlines_timedAcquireGivesUpOnTime() throws Exception {
        new DeadlineContract(env).timedAcquireGivesUpOnTime();
    }

    @Test
    public void c05_deadlines_tryAcquireDoesNotWait() throws Exception {
        new DeadlineContract(env).tryAcquireDoesNotWait();
    }

    @Test
    public void c05_deadlines_timedAcquireSucceedsWhenFreedInTime() throws Exception {
        new DeadlineContract(env).timedAcquireSucceedsWhenFreedInTime();
    }

    // ---- c06 Interruption -----------------------------------------------------------------------------------

    @Test
    public void c06_interruption_interruptedWaiterLeavesNothing() throws Exception {
        new DeadlineContract(env).interruptedWaiterLeavesNothing();
    }

    @Test
    public void c06_interruption_interruptedBeforeAcquire() throws Exception {
        new DeadlineContract(env).interruptedBeforeAcquire();
    }

    @Test
    public void c06_interruption_statusDoesNotStopOperationsThatDoNotWait() throws Exception {
        new DeadlineContract(env).interruptStatusDoesNotStopOperationsThatDoNotWait();
    }

    @Test
    public void c06_interruption_lockIsNotInterruptible() throws Exception {
        new DeadlineContract(env).lockIsNotInterruptible();
    }

    // ---- c07 Lease expiry -----------------------------------------------------------------------------------

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    @TckSchedule.LongWait
    @RequiresFeature(LockFeature.LEASE_EXPIRY)
    public void c07_leaseExpiry_killedWorkerProcessFreesAfterLease() throws Exception {
        new LeaseContract(env).killedWorkerFreesAfterLease();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    @TckSchedule.LongWait
    @RequiresFeature(LockFeature.LEASE_EXPIRY)
    public void c07_leaseExpiry_abandonedLeaseExpires() throws Exception {
        new LeaseContract(env).abandonedLeaseExpires();
    }

    @Test // alone: it bounds the time to the next grant within a tenth of the lease
    @RequiresFeature(LockFeature.LEASE_EXPIRY)
    public void c07_leaseExpiry_unrenewedLeaseFreedAtDeclaredTime() throws Exception {
        new LeaseEndContract(env).unrenewedLeaseFreedAtDeclaredTime();
    }

    @Test // alone: it bounds the time to the next grant within a tenth of the lease
    @RequiresFeature(LockFeature.LEASE_EXPIRY)
    public void c07_leaseExpiry_waiterGrantedWhenLeaseEnds() throws Exception {
        new LeaseEndContract(env).waiterGrantedWhenLeaseEnds();
    }

    // ---- c08 Renewal ----------------------------------------------------------------------------------------

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    @TckSchedule.LongWait
    @RequiresFeature(LockFeature.AUTO_RENEWAL)
    public void c08_renewal_liveHolderKeepsLockPastLease() throws Exception {
        new LeaseContract(env).liveHolderKeepsLockPastLease();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    @TckSchedule.LongWait
    @RequiresFeature(LockFeature.AUTO_RENEWAL)
    public void c08_renewal_renewalsRacingReleasesTouchNothing() throws Exception {
        new LeaseEndContract(env).renewalsRacingReleasesTouchNothing();
    }

    // ---- c09 Session binding --------------------------------------------------------------------------------

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    @TckSchedule.LongWait
    @RequiresFeature(LockFeature.SESSION_BOUND)
    @RequiresFault(LockFaults.Fault.KILL_SESSION)
    public void c09_session_killedSessionFreesPromptly() throws Exception {
        new LeaseContract(env).killedSessionFreesPromptly();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    @TckSchedule.LongWait
    @RequiresFeature(LockFeature.SESSION_BOUND)
    public void c09_session_killedWorkerProcessFreesPromptly() throws Exception {
        new LeaseContract(env).killedWorkerFreesWithSession();
    }

    @Test // alone: it bounds the time to the next grant within the session timeout plus a fraction of it
    @RequiresFeature(LockFeature.SESSION_BOUND)
    public void c09_session_abandonedClientFreesWithinSession() throws Exception {
        new LeaseEndContract(env).abandonedClientFreesWithinSession();
    }

    // ---- c10 Fencing ----------------------------------------------------------------------------------------

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    @RequiresFeature(LockFeature.FENCING)
    public void c10_fencing_tokensRiseAcrossClients() throws Exception {
        new FencingContract(env).tokensRiseAcrossClients();
    }

    @Test
    @ChecksUndeclared(LockFeature.FENCING)
    public void c10_fencing_undeclaredFencingTokenThrows() throws Exception {
        new FencingContract(env).undeclaredFencingThrows();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    @TckSchedule.LongWait
    @RequiresFeature(LockFeature.FENCING)
    public void c10_fencing_tokensRiseAcrossCrashedHolder() throws Exception {
        new FencingContract(env).tokensRiseAcrossCrashedHolder();
    }

    @Test
    @RequiresFeature(LockFeature.DURABLE_FENCING)
    @RequiresFault(LockFaults.Fault.RESTART_STORE)
    public void c10_fencing_tokensRiseAcrossStoreRestart() throws Exception {
        new FencingContract(env).tokensRiseAcrossStoreRestart(LockFaults.Fault.RESTART_STORE);
    }

    @Test
    @RequiresFeature(LockFeature.DURABLE_FENCING)
    @RequiresFault(LockFaults.Fault.RESTART_STORE_EMPTY)
    public void c10_fencing_tokensRiseAcrossEmptyStoreRestart() throws Exception {
        new FencingContract(env).tokensRiseAcrossStoreRestart(LockFaults.Fault.RESTART_STORE_EMPTY);
    }

    // ---- c11 Loss detection ---------------------------------------------------------------------------------

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    @TckSchedule.LongWait
    @RequiresFeature({LockFeature.LOSS_DETECTION, LockFeature.SESSION_BOUND})
    @RequiresFault(LockFaults.Fault.KILL_SESSION)
    public void c11_lossDetection_sessionKilled() throws Exception {
        new LeaseContract(env).lostBySessionKill();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    @TckSchedule.LongWait
    @ChecksUndeclared(LockFeature.SESSION_BOUND)
    @RequiresFault(LockFaults.Fault.KILL_SESSION)
    public void c11_lossDetection_sessionKilledWithoutSessionBinding() throws Exception {
        new LeaseContract(env).sessionKillNeverLeavesAValidUnheldLease();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    @TckSchedule.LongWait
    @RequiresFeature(LockFeature.LOSS_DETECTION)
    @RequiresFault(LockFaults.Fault.DELETE_LOCK_STATE)
    public void c11_lossDetection_stateDeleted() throws Exception {
        new LeaseContract(env).lostByStateDeletion();
    }

    @Test
    @RequiresFeature({LockFeature.LOSS_DETECTION, LockFeature.LEASE_EXPIRY})
    public void c11_lossDetection_leaseExpired() throws Exception {
        new LeaseContract(env).lostByExpiry();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    @TckSchedule.LongWait
    public void c11_lossDetection_oneStalledLeaseSparesTheOthers() throws Exception {
        new IndependentRenewalContract(env).oneStalledLeaseSparesTheOthers();
    }

    // ---- c12 Fairness ---------------------------------------------------------------------------------------

    @Test
    @RequiresFeature(LockFeature.FAIR)
    public void c12_fairness_arrivalOrder() throws Exception {
        new FairnessContract(env).arrivalOrder();
    }

    @Test
    @RequiresFeature(LockFeature.FAIR)
    public void c12_fairness_lockKeepsItsPlaceThroughInterrupts() throws Exception {
        new FairnessContract(env).lockKeepsItsPlaceThroughInterrupts();
    }

    @Test
    @RequiresFeature(LockFeature.FAIR)
    public void c12_fairness_arrivalOrderOfADozen() throws Exception {
        new FairnessContract(env).arrivalOrderOfADozen();
    }

    // ---- c13 Close ------------------------------------------------------------------------------------------

    @Test
    public void c13_close_releasesLeases() throws Exception {
        new CloseContract(env).releasesLeases();
    }

    @Test
    public void c13_close_failsWaitersPromptly() throws Exception {
        new CloseContract(env).failsWaitersPromptly();
    }

    @Test
    public void c13_close_leaksNoThreads() throws Exception {
        new CloseContract(env).leaksNoThreads();
    }

    @Test
    @RequiresHook(Hook.OPEN_CONNECTIONS)
    public void c13_close_leaksNoConnections() throws Exception {
        new CloseContract(env).leaksNoConnections();
    }

    @Test
    public void c13_close_noFurtherUse() throws Exception {
        new CloseContract(env).noFurtherUse();
    }

    @Test
    public void c13_close_cancelsWaitersWithoutLeaks() throws Exception {
        new CloseContract(env).cancelsWaitersWithoutLeaks();
    }

    // ---- c14 Keys -------------------------------------------------------------------------------------------

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    public void c14_keys_unusualKeysWork() throws Exception {
        new KeyContract(env).unusualKeysWork();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    public void c14_keys_distinctKeysNeverCollide() throws Exception {
        new KeyContract(env).distinctKeysNeverCollide();
    }

    @Test
    public void c14_keys_invalidKeysRejectedBeforeIo() {
        new KeyContract(env).invalidKeysRejected();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    @TckSchedule.LongWait
    public void c14_keys_derivedNamesIndependent() throws Exception {
        new DerivedNamesContract(env).derivedNamesIndependent();
    }

    // ---- c15 Unavailable store ------------------------------------------------------------------------------

    @Test
    @RequiresFault(LockFaults.Fault.STORE_OUTAGE)
    public void c15_unavailableStore_failsWithinTimeoutAndRecovers() throws Exception {
        new StoreContract(env).outageFailsFastAndRecovers();
    }

    @Test
    @RequiresFault(LockFaults.Fault.STORE_OUTAGE)
    public void c15_unavailableStore_releaseAndCloseBoundedAndHandOffsWorkAfter() throws Exception {
        new StoreContract(env).releaseAndCloseBoundedAndHandOffsWorkAfter();
    }

    // ---- c16 Cleanup ----------------------------------------------------------------------------------------

    @Test
    @Execution(ExecutionMode.CONCURRENT) // see TckSchedule
    @RequiresHook(Hook.STORE_ENTRIES)
    public void c16_cleanup_boundedStateAfterCycles() throws Exception {
        new StoreContract(env).boundedStateAfterCycles();
    }

    @Test
    public void c16_cleanup_hooksSeeTheStore() throws Exception {
        new StoreContract(env).hooksSeeTheStore();
    }

    // ---- c17 Detached leases --------------------------------------------------------------------------------

    @Test
    public void c17_detached_releasedByAnotherThreadOnce() throws Exception {
        new DetachedContract(env).releasedByAnotherThreadOnce();
    }

    @Test
    public void c17_detached_contendsWithTheOwningThread() throws Exception {
        new DetachedContract(env).contendsWithTheOwningThread();
    }

    @Test
    public void c17_detached_asyncCompletesOnTheExecutor() throws Exception {
        new DetachedContract(env).asyncCompletesOnTheExecutor();
    }

    @Test
    public void c17_detached_asyncTimesOut() throws Exception {
        new DetachedContract(env).asyncTimesOut();
    }

    @Test
    public void c17_detached_asyncCancelLeavesNothing() throws Exception {
        new DetachedContract(env).asyncCancelLeavesNothing();
    }

    @Test
    public void c17_detached_closeFailsPendingFutures() throws Exception {
        new DetachedContract(env).closeFailsPendingFutures();
    }

    @Test
    public void c17_detached_lossIsReported() throws Exception {
        new DetachedContract(env).lossIsReported();
    }

    @Test
    public void c17_detached_closeFailsAFutureWhoseCompletionIsQueued() throws Exception {
        new AsyncCloseContract(env).closeFailsAFutureWhoseCompletionIsQueued();
    }
}
