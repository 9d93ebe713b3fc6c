package org.locksmith.lock.tck.reference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * A kit that cannot fail proves nothing: each deliberately broken backend is run through the TCK (only the contract
 * it breaks, through the JUnit Platform launcher), and the TCK must report exactly that contract failed, while the
 * correct reference passes the same tests.
 */
class BrokenBackendsTest {

    @TempDir
    Path reportDir;

    /** Runs {@code methods} of {@code tck} and returns each method's outcome (SUCCESSFUL, FAILED, ABORTED...). */
    private Map<String, TestExecutionResult> run(Class<?> tck, String... methods) {
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                .selectors(Arrays.stream(methods).map(m -> selectMethod(tck, m)).toList())
                // Keep broken backends out of the build's semantics table.
                .configurationParameter("locksmith.tck.reportDir", reportDir.toString())
                .build();
        Map<String, TestExecutionResult> results = new ConcurrentHashMap<>();
        LauncherFactory.create().execute(request, new TestExecutionListener() {
            @Override
            public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                id.getSource()
                        .filter(MethodSource.class::isInstance)
                        .map(s -> ((MethodSource) s).getMethodName())
                        .ifPresent(name -> results.put(name, result));
            }
        });
        return results;
    }

    /** Runs {@code tests} on the correct backend {@code reference} and asserts that each passed. */
    private void assertAllPass(Class<?> reference, List<String> tests) {
        Map<String, TestExecutionResult> results = run(reference, tests.toArray(String[]::new));
        for (String t : tests) {
            assertThat(results.get(t))
                    .as(reference.getSimpleName() + " on " + t + ": " + results.get(t))
                    .isNotNull()
                    .extracting(TestExecutionResult::getStatus)
                    .isEqualTo(TestExecutionResult.Status.SUCCESSFUL);
        }
    }

    /** Runs {@code contractTest} on {@code broken}, asserts it failed, and returns the failure's message. */
    private String assertCaught(Class<?> broken, String contractTest, String expectedInMessage) throws Exception {
        Map<String, TestExecutionResult> results = run(broken, contractTest);
        TestExecutionResult result = results.get(contractTest);
        assertThat(result)
                .as(broken.getSimpleName() + ": " + contractTest + " did not run")
                .isNotNull();
        assertThat(result.getStatus())
                .as(broken.getSimpleName() + " must fail " + contractTest + " but it " + result)
                .isEqualTo(TestExecutionResult.Status.FAILED);
        String message = String.valueOf(result.getThrowable().orElseThrow());
        assertThat(message)
                .as("the failure names the contract and the backend")
                .contains(contractTest.substring(0, 3))
                .contains("backend=broken-");
        if (expectedInMessage != null) {
            assertThat(message).contains(expectedInMessage);
        }
        // The JSON result of the run records the contract as failed.
        try (var files = Files.list(reportDir)) {
            String json = Files.readString(files.filter(p -> p.toString().endsWith(".json"))
                    .findFirst()
                    .orElseThrow());
            assertThat(json).contains("{\"id\": \"" + contractTest.substring(0, 3) + "\"");
            assertThat(json)
                    .containsPattern("\"id\": \"" + contractTest.substring(0, 3) + "\"[^}]*\"status\": \"fail\"");
        }
        return message;
    }

    @Test
    void referencePassesEveryTestTheBrokenBackendsFail() {
        List<String> tests = List.of(
                "c01_mutualExclusion_severalClients",
                "c02_progress_handoffLatency",
                "c04_ownership_staleReleaseDoesNotFreeNewHolder",
                "c05_deadlines_timedAcquireGivesUpOnTime",
                "c05_deadlines_tryAcquireDoesNotWait",
                "c06_interruption_interruptedWaiterLeavesNothing",
                "c10_fencing_tokensRiseAcrossCrashedHolder",
                "c10_fencing_tokensRiseAcrossEmptyStoreRestart",
                "c01_mutualExclusion_holderAcrossEmptyStoreRestart",
                "c11_lossDetection_stateDeleted",
                "c11_lossDetection_leaseExpired",
                "c12_fairness_arrivalOrder",
                "c12_fairness_lockKeepsItsPlaceThroughInterrupts",
                "c06_interruption_lockIsNotInterruptible",
                "c15_unavailableStore_releaseAndCloseBoundedAndHandOffsWorkAfter",
                "c13_close_leaksNoThreads",
                "c13_close_leaksNoConnections",
                "c14_keys_distinctKeysNeverCollide");
        assertAllPass(MemoryReferenceTckTest.class, tests);
        Map<String, TestExecutionResult> unrenewed =
                run(BrokenTcks.ReferenceWithoutRenewal.class, "c07_leaseExpiry_abandonedLeaseExpires");
        assertThat(unrenewed.get("c07_leaseExpiry_abandonedLeaseExpires").getStatus())
                .as("unrenewed reference on c07 " + unrenewed)
                .isEqualTo(TestExecutionResult.Status.SUCCESSFUL);
    }

    /**
     * No false alarms: a correct backend with LEASE_EXPIRY but without AUTO_RENEWAL passes every contract at the
     * default timings; each contract holds its keys within what the declared features promise.
     */
    @Test
    void aCorrectBackendWithoutRenewalPassesTheWholeKit() {
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                .selectors(org.junit.platform.engine.discovery.DiscoverySelectors.selectClass(
                        BrokenTcks.ReferenceWithoutRenewal.class))
                .configurationParameter("locksmith.tck.reportDir", reportDir.toString())
                .build();
        Map<String, String> failed = new ConcurrentHashMap<>();
        LauncherFactory.create().execute(request, new TestExecutionListener() {
            @Override
            public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                if (id.isTest() && result.getStatus() == TestExecutionResult.Status.FAILED) {
                    failed.put(
                            id.getDisplayName(),
                            String.valueOf(result.getThrowable().orElse(null)));
                }
            }
        });
        assertThat(failed)
                .as("contracts the correct unrenewed reference failed")
                .isEmpty();
    }

    @Test
    void pausedHolderThatTrustsItsLeaseTooLong() throws Exception {
        assertCaught(
                BrokenTcks.FileDeclaresLongerLease.class,
                "c01_mutualExclusion_pausedHolderNeverValidWhileAnotherHolds",
                "two valid holders");
    }

    @Test
    void faultLoadCatchesOverlappingValidityAndTokensThatGoBack() throws Exception {
        String test = "c01_mutualExclusion_randomisedContentionUnderKillsAndPauses";
        // FileDeclaresLongerLease is caught here only when the resumed holder looks at its lease before its renewer
        // reports the loss; c01_mutualExclusion_pausedHolderNeverValidWhileAnotherHolds catches it every time.
        // Two workers that take over at once overlap or share a token; which check sees it first depends on timing.
        assertThat(assertCaught(BrokenTcks.FileRacyTakeover.class, test, null))
                .containsAnyOf("two valid holders", "fencing token");
        assertCaught(BrokenTcks.FileTokenReusedOnTakeover.class, test, "fencing token");
    }

    @Test
    void aStoreKeepingLeasesHalfAgainAsLongAsDeclaredFailsTheCrashBound() throws Exception {
        assertCaught(
                BrokenTcks.FileKeepsLeasesHalfAgainAsLong.class,
                "c07_leaseExpiry_killedWorkerProcessFreesAfterLease",
                null);
    }

    @Test
    void anOwnerIdPerClientFailsTheSameClientStaleRelease() throws Exception {
        assertCaught(
                BrokenTcks.OwnerPerClient.class,
                "c04_ownership_staleReleaseDoesNotFreeSameClientsOtherThread",
                "another thread of client A");
    }

    @Test
    void aWaiterPollingEvery30MsFailsTheRequestCount() throws Exception {
        assertCaught(BrokenTcks.Poll30MsWakeup.class, "c02_progress_idleWaiterDoesNotPoll", "must not poll");
    }

    @Test
    void aReleaseThatWorksOnlyOnTheAcquiringThreadFailsTheDetachedRelease() throws Exception {
        assertCaught(
                BrokenTcks.ReleaseOnAcquiringThreadOnly.class,
                "c17_detached_releasedByAnotherThreadOnce",
                "released by another thread");
    }

    @Test
    void aWaitThatIgnoresCancellationFailsTheAsyncCancel() throws Exception {
        assertCaught(
                BrokenTcks.IgnoresCancel.class, "c17_detached_asyncCancelLeavesNothing", "acquireAsync was cancelled");
    }

    @Test
    void aWaiterPollingOnlyWithoutADeadlineFailsTheRequestCount() throws Exception {
        assertCaught(BrokenTcks.PollWithoutDeadline.class, "c02_progress_idleWaiterDoesNotPoll", "must not poll");
    }

    @Test
    void aStoreEntriesHookThatNeverMovesFailsItsSelfCheck() throws Exception {
        assertCaught(
                BrokenTcks.StoreEntriesHookNeverMoves.class, "c16_cleanup_hooksSeeTheStore", "does not see the store");
    }

    @Test
    void noExclusionAcrossClients() throws Exception {
        assertCaught(BrokenTcks.NoExclusionAcrossClients.class, "c01_mutualExclusion_severalClients", "holder");
        assertCaught(BrokenTcks.NoExclusionAcrossClients.class, "c01_mutualExclusion_stress8Clients200Each", null);
    }

    @Test
    void releaseWithoutOwnerCheck() throws Exception {
        assertCaught(
                BrokenTcks.ReleaseWithoutOwnerCheck.class,
                "c04_ownership_staleReleaseDoesNotFreeNewHolder",
                "not owner-checked");
    }

    @Test
    void fencingTokenRepeatsAfterCrash() throws Exception {
        assertCaught(BrokenTcks.TokenRepeatsAfterCrash.class, "c10_fencing_tokensRiseAcrossCrashedHolder", "token");
    }

    @Test
    void timedAcquireReturnsEarly() throws Exception {
        assertCaught(
                BrokenTcks.TimedAcquireReturnsEarly.class,
                "c05_deadlines_timedAcquireGivesUpOnTime",
                "earlier than asked");
    }

    @Test
    void timedAcquireOvershootsBySeconds() throws Exception {
        assertCaught(BrokenTcks.TimedAcquireOvershoots.class, "c05_deadlines_timedAcquireGivesUpOnTime", "late");
    }

    @Test
    void tryAcquireThatWaitsBriefly() throws Exception {
        assertCaught(
                BrokenTcks.TryWaits40Ms.class, "c05_deadlines_tryAcquireDoesNotWait", "must not wait on the holder");
    }

    @Test
    void declaresLeaseExpiryButNeverExpires() throws Exception {
        assertCaught(BrokenTcks.NeverExpires.class, "c07_leaseExpiry_abandonedLeaseExpires", "abandoned");
    }

    @Test
    void declaresBlockingWakeupButPollsEvery150Ms() throws Exception {
        assertCaught(BrokenTcks.Poll150MsWakeup.class, "c02_progress_handoffLatency", "BLOCKING_WAKEUP");
    }

    @Test
    void declaresBlockingWakeupButWakesOnlyItsOwnProcess() throws Exception {
        assertCaught(BrokenTcks.FileLocalWakeupOnly.class, "c02_progress_handoffToWorkerProcess", "worker JVM");
    }

    @Test
    void declaresBlockingWakeupButLosesOneWakeupInFour() throws Exception {
        assertCaught(BrokenTcks.LosesOneWakeupInFour.class, "c02_progress_handoffLatency", "lost wake-up");
    }

    @Test
    void keysTruncatedAt255Characters() throws Exception {
        assertCaught(BrokenTcks.KeysTruncatedAt255.class, "c14_keys_distinctKeysNeverCollide", "collide");
    }

    @Test
    void closeLeavesALibraryThreadRunning() throws Exception {
        try {
            assertCaught(BrokenTcks.LeaksHousekeeperThread.class, "c13_close_leaksNoThreads", "-pool-housekeeper-");
        } finally {
            MemoryLockBackend.stopLeakedHousekeepers();
        }
    }

    @Test
    void closeLeavesAConnectionOpen() throws Exception {
        assertCaught(BrokenTcks.LeaksConnection.class, "c13_close_leaksNoConnections", "connections to the store");
    }

    @Test
    void leavesWaiterStateAfterInterrupt() throws Exception {
        assertCaught(BrokenTcks.LeaksWaiterOnInterrupt.class, "c06_interruption_interruptedWaiterLeavesNothing", null);
    }

    @Test
    void declaresFairButGrantsOutOfOrder() throws Exception {
        assertCaught(BrokenTcks.UnfairOrder.class, "c12_fairness_arrivalOrder", "arrived in that order");
    }

    @Test
    void aReleaseThatWaitsOutAnOutageFailsTheOutageBound() throws Exception {
        assertCaught(
                BrokenTcks.ReleaseWaitsOutOutage.class,
                "c15_unavailableStore_releaseAndCloseBoundedAndHandOffsWorkAfter",
                "release() of a held lease during a store outage");
    }

    @Test
    void wakeUpsLostAfterAnOutageFailTheHandOffAfterIt() throws Exception {
        assertCaught(
                BrokenTcks.WakeupsLostAfterOutage.class,
                "c15_unavailableStore_releaseAndCloseBoundedAndHandOffsWorkAfter",
                "after the outage");
    }

    @Test
    void lockRequeuesAtTheBackWhenInterrupted() throws Exception {
        assertCaught(
                BrokenTcks.RequeuesOnInterrupt.class,
                "c12_fairness_lockKeepsItsPlaceThroughInterrupts",
                "interrupted twice while queued");
    }

    @Test
    void lockSwallowsTheInterrupt() throws Exception {
        assertCaught(BrokenTcks.SwallowsInterrupt.class, "c06_interruption_lockIsNotInterruptible", "interrupt status");
    }

    @Test
    void caseInsensitiveKeysCollide() throws Exception {
        assertCaught(BrokenTcks.CaseInsensitiveKeys.class, "c14_keys_distinctKeysNeverCollide", "collide");
    }

    /**
     * The unrenewed reference passes the expiry side of c11: the core fires onLost when a lease that nobody renews
     * runs out, not only from a renewal round or a backend's report.
     */
    @Test
    void referenceWithoutRenewalReportsExpiry() {
        Map<String, TestExecutionResult> results =
                run(BrokenTcks.ReferenceWithoutRenewal.class, "c11_lossDetection_leaseExpired");
        assertThat(results.get("c11_lossDetection_leaseExpired").getStatus())
                .as("unrenewed reference on c11 expiry " + results)
                .isEqualTo(TestExecutionResult.Status.SUCCESSFUL);
    }

    @Test
    void declaresLossDetectionButRenewalHidesAnOutage() throws Exception {
        assertCaught(BrokenTcks.RenewSwallowsOutage.class, "c11_lossDetection_leaseExpired", "isValid()");
    }

    @Test
    void declaresLossDetectionButExpiresSilently() throws Exception {
        assertCaught(BrokenTcks.ExpiresSilently.class, "c11_lossDetection_leaseExpired", "isValid()");
    }

    @Test
    void declaresLossDetectionButRenewalNeverNotices() throws Exception {
        assertCaught(BrokenTcks.RenewIgnoresLoss.class, "c11_lossDetection_stateDeleted", "isValid()");
    }

    @Test
    void storeCallsThatFailOnAnInterruptedThread() throws Exception {
        assertCaught(
                BrokenTcks.CallsFailWhenInterrupted.class,
                "c06_interruption_statusDoesNotStopOperationsThatDoNotWait",
                "with the interrupt status set threw");
    }

    @Test
    void grantsAForgottenLockWhileItsHolderStillBelieves() throws Exception {
        assertCaught(
                BrokenTcks.GrantsRightAfterRestart.class,
                "c01_mutualExclusion_holderAcrossStoreRestart",
                "two valid holders across a store restart");
        assertCaught(
                BrokenTcks.GrantsRightAfterRestart.class,
                "c01_mutualExclusion_holderAcrossEmptyStoreRestart",
                "two valid holders across a store restart");
    }

    @Test
    void fencingTokensResetByAnEmptyRestart() throws Exception {
        assertCaught(
                BrokenTcks.TokensResetOnEmptyRestart.class,
                "c10_fencing_tokensRiseAcrossEmptyStoreRestart",
                "RESTART_STORE_EMPTY");
    }

    @Test
    void racersForAnExpiredKeyAllWinAStoreThatTakesOverInTwoSteps() throws Exception {
        assertCaught(BrokenTcks.FileRacyTakeover.class, "c01_mutualExclusion_killedWorkerHolder", "two valid");
    }

    @Test
    void storeSideReentryPerClientLetsThreadsOfOneClientShareTheKey() throws Exception {
        assertCaught(BrokenTcks.ReentersPerClient.class, "c01_mutualExclusion_threadsOfOneClient", "other holder(s)");
    }

    @Test
    void storeSideReentryPerThreadLetsClientsOnOneThreadShareTheKey() throws Exception {
        assertCaught(
                BrokenTcks.ReentersPerThread.class,
                "c04_ownership_otherClientCannotRelease",
                "was granted the key while client A held it");
        assertCaught(
                BrokenTcks.ReentersPerThread.class,
                "c04_ownership_releaseByAnotherThreadFails",
                "was granted the key while another thread had failed to release");
        assertCaught(
                BrokenTcks.ReentersPerThread.class,
                "c17_detached_contendsWithTheOwningThread",
                "acquireDetached(200 ms) by the thread holding the key thread-owned");
    }

    @Test
    void aLockTableLocalToEachProcessFailsExclusionBetweenWorkerProcesses() throws Exception {
        // Processes that do not see each other's grants overlap, or take turns out of token order: which the check
        // meets first depends on timing.
        assertThat(assertCaught(
                        BrokenTcks.FileProcessLocalLockTable.class, "c01_mutualExclusion_workerProcesses", null))
                .containsAnyOf("two holders at once", "fencing token");
    }

    /**
     * A near cache per process: passed c01_mutualExclusion_workerProcesses when the workers ran one after another as
     * their JVMs came up, each taking the key for all its rounds in a row.
     */
    @Test
    void aStateCacheLocalToEachProcessFailsExclusionBetweenWorkerProcesses() throws Exception {
        assertThat(assertCaught(
                        BrokenTcks.FileProcessLocalStateCache.class, "c01_mutualExclusion_workerProcesses", null))
                .containsAnyOf("two holders at once", "fencing token");
    }

    @Test
    void aHandOffWithoutLeaseLetsAFrozenWaiterKeepTheKey() throws Exception {
        assertCaught(
                BrokenTcks.FileHandoffWithoutLease.class,
                "c01_mutualExclusion_pausedWaiterNeitherKeepsNorShares",
                "the frozen waiter kept the key");
    }

    @Test
    void aTimedWaitInTheWrongUnitGivesUpBeforeTheRelease() throws Exception {
        assertCaught(
                BrokenTcks.WaitTimeoutInWrongUnit.class,
                "c05_deadlines_timedAcquireSucceedsWhenFreedInTime",
                "tryAcquire(10 s) when the holder released after 100 ms");
    }

    @Test
    void locksOfAKilledSessionRestoredUnderTheNewSessionNeverFree() throws Exception {
        assertCaught(
                BrokenTcks.KilledSessionLocksRestored.class,
                "c09_session_killedSessionFreesPromptly",
                "after client A's session was killed");
    }

    @Test
    void aStoreThatDeclaresSessionBoundButFreesOnlyAtLeaseEndFailsTheKilledWorker() throws Exception {
        assertCaught(
                BrokenTcks.FileDeclaresSessionBound.class,
                "c09_session_killedWorkerProcessFreesPromptly",
                "after its holder process was killed (SESSION_BOUND)");
    }

    @Test
    void anUncancellableStoreWaitDelaysCloseForItsWaiters() throws Exception {
        assertCaught(BrokenTcks.UncancellableStoreWait.class, "c13_close_failsWaitersPromptly", "after close() began");
        assertCaught(
                BrokenTcks.UncancellableStoreWait.class,
                "c17_detached_closeFailsPendingFutures",
                "close() and the failure of the pending future took (ms)");
    }

    @Test
    void releasesWrittenBehindAndDroppedOnCloseLeaveTheKeysHeld() throws Exception {
        assertCaught(
                BrokenTcks.ReleasesWriteBehind.class,
                "c13_close_releasesLeases",
                "at once after client A, its holder, was closed");
    }

    @Test
    void aKeyColumnWithoutSupplementaryCharactersFailsUnusualKeys() throws Exception {
        assertCaught(
                BrokenTcks.KeysWithoutSupplementaryCharacters.class,
                "c14_keys_unusualKeysWork",
                "a valid key could not be acquired");
    }

    @Test
    void abandonedWaiterRecordsKeptForeverFailBoundedState() throws Exception {
        assertCaught(
                BrokenTcks.KeepsAbandonedWaiterRecords.class,
                "c16_cleanup_boundedStateAfterCycles",
                "store entries of the released key");
    }

    @Test
    void aTimedOutWaiterLeftInTheQueueFailsTheAsyncTimeout() throws Exception {
        assertCaught(
                BrokenTcks.LeaksWaiterOnTimeout.class,
                "c17_detached_asyncTimesOut",
                "could not get the free key after acquireAsync timed out");
    }

    @Test
    void aReleaseThatWorksOnlyOnTheAcquiringThreadFailsTheAsyncLease() throws Exception {
        assertCaught(
                BrokenTcks.ReleaseOnAcquiringThreadOnly.class,
                "c17_detached_asyncCompletesOnTheExecutor",
                "after the async lease was released by another thread");
    }

    @Test
    void aRenewalThatNeverNoticesLossFailsTheDetachedLoss() throws Exception {
        assertCaught(
                BrokenTcks.RenewIgnoresLoss.class,
                "c17_detached_lossIsReported",
                "isValid() of a detached lease whose state was deleted");
    }

    /** The reference passes the tests the new broken backends above fail. */
    @Test
    void referencePassesTheTestsOfTheNewBrokenBackends() {
        List<String> tests = List.of(
                "c01_mutualExclusion_threadsOfOneClient",
                "c04_ownership_otherClientCannotRelease",
                "c04_ownership_releaseByAnotherThreadFails",
                "c05_deadlines_timedAcquireSucceedsWhenFreedInTime",
                "c09_session_killedSessionFreesPromptly",
                "c13_close_failsWaitersPromptly",
                "c13_close_releasesLeases",
                "c14_keys_unusualKeysWork",
                "c16_cleanup_boundedStateAfterCycles",
                "c17_detached_asyncCompletesOnTheExecutor",
                "c17_detached_asyncTimesOut",
                "c17_detached_closeFailsPendingFutures",
                "c17_detached_contendsWithTheOwningThread",
                "c17_detached_lossIsReported");
        assertAllPass(MemoryReferenceTckTest.class, tests);
    }

    /**
     * The file reference passes the worker-process tests the new file variants fail (its worker processes contend
     * from a common start: c01_mutualExclusion_workerProcesses sends them GO together), and a file backend that
     * declares SESSION_BOUND and frees a dead process's key within that session passes the killed-worker test.
     */
    @Test
    void fileReferencePassesTheWorkerTestsOfTheNewBrokenBackends() {
        List<String> tests =
                List.of("c01_mutualExclusion_workerProcesses", "c01_mutualExclusion_pausedWaiterNeitherKeepsNorShares");
        assertAllPass(BrokenTcks.FileReference.class, tests);
        // a file backend whose leases end within its declared session
        assertAllPass(
                BrokenTcks.FileSessionBoundWithinSession.class,
                List.of("c09_session_killedWorkerProcessFreesPromptly"));
    }

    @Test
    void releaseNotificationsDroppedInAlternationFailTheVariedHandOffs() throws Exception {
        // c02_progress_handoffLatency makes two releases a round, one waited for: the dropped ones never show there.
        assertThat(run(BrokenTcks.DropsAlternateReleaseNotifications.class, "c02_progress_handoffLatency")
                        .get("c02_progress_handoffLatency")
                        .getStatus())
                .as("the fixed hand-off rounds line the dropped notifications up with releases nobody waits for")
                .isEqualTo(TestExecutionResult.Status.SUCCESSFUL);
        assertCaught(
                BrokenTcks.DropsAlternateReleaseNotifications.class,
                "c02_progress_noLostWakeupsWithVariedReleases",
                "lost wake-up");
        // Under constant contention every release has waiters: the dropped notifications stall the hand-offs.
        assertCaught(
                BrokenTcks.DropsAlternateReleaseNotifications.class,
                "c01_mutualExclusion_severalClients",
                "lost wake-up");
    }

    @Test
    void aQueueKeptUnderADerivedNameCollidesWithThatKey() throws Exception {
        assertCaught(BrokenTcks.QueueUnderDerivedName.class, "c14_keys_derivedNamesIndependent", "collide");
    }

    @Test
    void aListenerLeftRunningByACancelledWaitFailsCloseWithWaiters() throws Exception {
        try {
            assertCaught(
                    BrokenTcks.LeaksListenerOfCancelledWaiter.class,
                    "c13_close_cancelsWaitersWithoutLeaks",
                    "-wakeup-listener-");
        } finally {
            MemoryLockBackend.stopLeakedHousekeepers();
        }
    }

    @Test
    void aHandOffToAWaiterGivingUpLeavesAnOrphanedGrant() throws Exception {
        assertCaught(
                BrokenTcks.OrphansRacedHandoff.class,
                "c02_progress_noOrphanedGrantWhenGivingUpRacesTheRelease",
                "held by nobody");
    }

    @Test
    void aFairQueueOfEightPlacesFailsADozenWaiters() throws Exception {
        assertAllPass(BrokenTcks.QueueOfEight.class, List.of("c12_fairness_arrivalOrder"));
        assertCaught(BrokenTcks.QueueOfEight.class, "c12_fairness_arrivalOrderOfADozen", "arrived in that order");
    }

    @Test
    void tokensStampedAtTheRequestGoBackInGrantOrder() throws Exception {
        assertCaught(BrokenTcks.TokenStampedAtRequest.class, "c01_mutualExclusion_threadsOfOneClient", "grant order");
        assertCaught(BrokenTcks.TokenStampedAtRequest.class, "c01_mutualExclusion_severalClients", "grant order");
    }

    /** The references pass the tests the broken backends above fail. */
    @Test
    void referencesPassTheHandOffKeyCloseAndFairnessTests() {
        List<String> tests = List.of(
                "c02_progress_noLostWakeupsWithVariedReleases",
                "c02_progress_noOrphanedGrantWhenGivingUpRacesTheRelease",
                "c12_fairness_arrivalOrderOfADozen",
                "c13_close_cancelsWaitersWithoutLeaks",
                "c14_keys_derivedNamesIndependent");
        assertAllPass(MemoryReferenceTckTest.class, tests);
        assertAllPass(
                BrokenTcks.FileReference.class,
                tests.stream().filter(t -> !t.startsWith("c12")).toList()); // the file backend is not FAIR
    }

    // ---- Lease ends: abandoned holders, stale releases, renewals racing releases ----

    @Test
    void aStoreKeepingUnrenewedLeasesLongerThanDeclaredIsCaughtInOneJvm() throws Exception {
        assertCaught(
                BrokenTcks.StoreKeepsLeasesLonger.class,
                "c07_leaseExpiry_unrenewedLeaseFreedAtDeclaredTime",
                "longer than its declared");
    }

    @Test
    void aStoreKeepingLeasesShorterThanDeclaredLeavesTwoValidHolders() throws Exception {
        assertCaught(
                BrokenTcks.StoreKeepsLeasesShorter.class,
                "c07_leaseExpiry_unrenewedLeaseFreedAtDeclaredTime",
                "two valid holders");
        assertCaught(
                BrokenTcks.StoreKeepsLeasesShorter.class,
                "c07_leaseExpiry_waiterGrantedWhenLeaseEnds",
                "two valid holders");
    }

    @Test
    void aWaiterBlindToExpiryIsGrantedOnlyAtItsDeadline() throws Exception {
        assertCaught(
                BrokenTcks.WaiterBlindToExpiry.class,
                "c07_leaseExpiry_waiterGrantedWhenLeaseEnds",
                "not told the lease ended");
    }

    @Test
    void aReleaseUncheckedOnceItsLeaseExpiredFreesTheNextHolder() throws Exception {
        assertCaught(
                BrokenTcks.ReleaseUncheckedOnceExpired.class,
                "c04_ownership_staleReleaseAfterEveryWayOfLoss",
                "renewals stopped and its lease expired");
    }

    @Test
    void aRenewalWrittenAfterTheReleaseTakesTheKeyBack() throws Exception {
        assertCaught(BrokenTcks.RenewalWrittenLate.class, "c08_renewal_renewalsRacingReleasesTouchNothing", "renewal");
    }

    @Test
    void aReleaseUncheckedAfterAFailedRenewalFreesTheNextHolder() throws Exception {
        assertCaught(
                BrokenTcks.ReleaseUncheckedAfterFailedRenewal.class,
                "c04_ownership_staleReleaseAfterOutage",
                "not owner-checked");
    }

    @Test
    void aCloseThatKeepsTheSessionsLocksNeverFreesAnAbandonedClient() throws Exception {
        assertCaught(
                BrokenTcks.CloseKeepsSessionLocks.class, "c09_session_abandonedClientFreesWithinSession", "abandoned");
        assertAllPass(BrokenTcks.ReferenceSessionOnly.class, List.of("c09_session_abandonedClientFreesWithinSession"));
    }

    /** The memory and file references pass the tests the broken backends above fail. */
    @Test
    void referencesPassTheLeaseEndTests() {
        List<String> tests = List.of(
                "c07_leaseExpiry_unrenewedLeaseFreedAtDeclaredTime",
                "c07_leaseExpiry_waiterGrantedWhenLeaseEnds",
                "c04_ownership_staleReleaseAfterEveryWayOfLoss",
                "c04_ownership_staleReleaseAfterOutage",
                "c08_renewal_renewalsRacingReleasesTouchNothing",
                "c09_session_abandonedClientFreesWithinSession");
        assertAllPass(MemoryReferenceTckTest.class, tests);
        assertAllPass(BrokenTcks.ReferenceWithoutRenewal.class, tests.subList(0, 4));
        assertAllPass(BrokenTcks.FileReference.class, tests.subList(0, 3));
    }

    /**
     * A lease granted to an async acquire whose future close() fails is released by close() like any other: a
     * backend that drops releases on close leaves that key held too. The reference passes the same test.
     */
    @Test
    void releasesDroppedOnCloseLeaveTheKeyOfAFailedFutureHeld() throws Exception {
        assertCaught(
                BrokenTcks.ReleasesWriteBehind.class,
                "c17_detached_closeFailsAFutureWhoseCompletionIsQueued",
                "after client W, granted the key for a future it then failed, closed");
        assertAllPass(MemoryReferenceTckTest.class, List.of("c17_detached_closeFailsAFutureWhoseCompletionIsQueued"));
    }

    @Test
    void renewalsOneAfterAnotherLoseTheLeasesBehindAStalledOne() throws Exception {
        assertCaught(
                BrokenTcks.RenewsOneAfterAnother.class,
                "c11_lossDetection_oneStalledLeaseSparesTheOthers",
                "one stalled renewal must not run the others' time out");
        assertAllPass(MemoryReferenceTckTest.class, List.of("c11_lossDetection_oneStalledLeaseSparesTheOthers"));
    }
}
