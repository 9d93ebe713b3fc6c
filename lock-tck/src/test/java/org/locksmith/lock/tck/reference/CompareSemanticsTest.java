package org.locksmith.lock.tck.reference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.Locks;
import org.locksmith.lock.tck.LockBackendsTest;
import org.locksmith.lock.tck.LockClientSource;

/** {@link LockBackendsTest}: one user test, every configured backend. */
@org.junit.jupiter.api.TestMethodOrder(org.junit.jupiter.api.MethodOrderer.OrderAnnotation.class)
class CompareSemanticsTest {
    static final Set<String> SEEN = ConcurrentHashMap.newKeySet();
    static final List<LockClient> OPENED = new CopyOnWriteArrayList<>();

    /** The in-memory reference, as a user's source class. */
    public static final class Memory implements LockClientSource {
        private static final MemoryStore STORE = new MemoryStore();

        @Override
        public LockClient open() {
            LockClient c = Locks.client(new MemoryLockBackend(
                    STORE, "reference-memory", MemoryLockBackend.ALL, Duration.ofSeconds(1), Set.of()));
            OPENED.add(c);
            return c;
        }

        @Override
        public String name() {
            return "reference-memory";
        }
    }

    /** The file reference, as a user's source class. */
    public static final class File implements LockClientSource {
        @Override
        public LockClient open() {
            try {
                Path dir = Files.createTempDirectory("locksmith-compare-");
                dir.toFile().deleteOnExit();
                LockClient c = Locks.open("file://" + dir + "?leaseMs=1000");
                OPENED.add(c);
                return c;
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    @org.junit.jupiter.api.Order(1)
    @LockBackendsTest(
            sources = {Memory.class, File.class},
            urlsFromProperty = false)
    void aHeldKeyIsNotGrantedToAnotherClientOnEveryBackend(LockClient locks) throws Exception {
        SEEN.add(locks.backend());
        String key = "compare-" + System.nanoTime();
        try (LockLease lease = locks.lock(key).acquire(Duration.ofSeconds(2))) {
            assertThat(lease.isValid()).isTrue();
            // The semantics differ where the features do: FAIR is declared by the memory reference only.
            assertThat(locks.features().contains(LockFeature.FAIR))
                    .isEqualTo(locks.backend().equals("reference-memory"));
        }
        assertThat(locks.lock(key).tryAcquire()).isPresent().get().satisfies(LockLease::release);
    }

    /** Run through the launcher, with URLs from the configuration parameter. */
    static class ByUrls {
        @LockBackendsTest
        void works(LockClient locks) throws Exception {
            SEEN.add("url:" + locks.backend());
            locks.lock("k").acquire(Duration.ofSeconds(1)).release();
        }
    }

    private Map<String, TestExecutionResult> launch(String urls, Path reports) {
        Map<String, TestExecutionResult> results = new ConcurrentHashMap<>();
        var request = LauncherDiscoveryRequestBuilder.request()
                .selectors(selectMethod(ByUrls.class, "works", LockClient.class.getName()))
                .configurationParameter(LockBackendsTest.URLS_PROPERTY, urls)
                .configurationParameter("locksmith.tck.reportDir", reports.toString())
                .build();
        LauncherFactory.create().execute(request, new TestExecutionListener() {
            @Override
            public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                results.put(id.getDisplayName(), result);
            }
        });
        return results;
    }

    @Test
    void urlsFromTheConfigurationRunOneInvocationEach(@TempDir Path a, @TempDir Path b, @TempDir Path reports) {
        Map<String, TestExecutionResult> results = launch("file://" + a + "; file://" + b + "?leaseMs=500", reports);
        assertThat(results.keySet()).anyMatch(n -> n.startsWith("[1] file://"));
        assertThat(results.keySet()).anyMatch(n -> n.startsWith("[2] file://"));
        results.forEach((name, r) ->
                assertThat(r.getStatus()).as(name + " " + r).isEqualTo(TestExecutionResult.Status.SUCCESSFUL));
        assertThat(SEEN).contains("url:reference-file");
    }

    @Test
    void noBackendConfiguredFailsSayingWhatToSet(@TempDir Path reports) {
        Map<String, TestExecutionResult> results = launch("", reports);
        Optional<Throwable> failure = results.values().stream()
                .filter(r -> r.getStatus() == TestExecutionResult.Status.FAILED)
                .findFirst()
                .flatMap(TestExecutionResult::getThrowable);
        assertThat(failure).isPresent();
        assertThat(failure.get().getMessage())
                .contains(LockBackendsTest.URLS_PROPERTY)
                .contains("sources()");
    }

    @Test
    @org.junit.jupiter.api.Order(2)
    void everyBackendRanAndEveryClientWasClosed() {
        assertThat(SEEN).contains("reference-memory", "reference-file");
        assertThat(OPENED).hasSizeGreaterThanOrEqualTo(2);
        for (LockClient c : OPENED) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> c.lock("x"))
                    .as("client of " + c.backend() + " closed after its invocation")
                    .isInstanceOf(IllegalStateException.class);
        }
    }
}
