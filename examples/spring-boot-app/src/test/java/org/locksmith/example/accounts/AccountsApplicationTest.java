package org.locksmith.example.accounts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.testservers.TestRedis;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The example application on a random port, against the tests' Redis ({@code LOCKSMITH_TEST_REDIS_URL}, else one
 * started for the tests), with its report every 200 ms, held at least 500 ms: deposits through HTTP, the report job under its ShedLock
 * lock, and the actuator's health and metrics.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"accounts.report.interval=PT0.2S", "accounts.report.lock-at-least-for=PT0.5S"})
class AccountsApplicationTest {
    private static final String PREFIX = "example-app-" + UUID.randomUUID() + ":";
    private static final String REPORT_KEY = "shedlock:accounts-report";

    // A Redis the tests start (the fresh-machine path) would grant nothing for its first lease time, the backend's
    // guard against a restart that forgot the locks it held: sharedLockUrl turns that off for such a server only.
    @DynamicPropertySource
    static void locksmith(DynamicPropertyRegistry registry) {
        registry.add("locksmith.url", () -> TestRedis.sharedLockUrl("prefix=" + PREFIX));
    }

    @LocalServerPort
    int port;

    @Autowired
    LockClient locks;

    @Autowired
    FencedLedger ledger;

    @Autowired
    ReportJob reportJob;

    @Autowired
    JsonMapper json;

    private final HttpClient http =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @Test
    void concurrentDepositsAreWrittenInTokenOrderAndALateWriteWithAnOldTokenIsRefused() throws Exception {
        String account = "a-" + UUID.randomUUID();
        int requests = 16;
        ExecutorService callers = Executors.newFixedThreadPool(requests);
        List<AccountController.Deposit> deposits = new ArrayList<>();
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<HttpResponse<String>>> calls = new ArrayList<>();
            for (int i = 0; i < requests; i++) {
                calls.add(callers.submit(() -> {
                    go.await();
                    return post("/accounts/" + account + "/deposit?amount=1");
                }));
            }
            go.countDown();
            for (Future<HttpResponse<String>> call : calls) {
                HttpResponse<String> response = call.get(30, TimeUnit.SECONDS);
                assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
                deposits.add(json.readValue(response.body(), AccountController.Deposit.class));
            }
        } finally {
            callers.shutdownNow();
        }

        deposits.sort(Comparator.comparingLong(AccountController.Deposit::fencingToken));
        for (int i = 0; i < requests; i++) {
            assertThat(deposits.get(i).balance())
                    .as(
                            "the deposit with the %d-th lowest token saw the balance of %d deposits: the lock made the"
                                    + " writes one at a time, in token order (%s)",
                            i + 1, i + 1, deposits)
                    .isEqualTo(i + 1);
        }
        long first = deposits.get(0).fencingToken();
        long last = deposits.get(requests - 1).fencingToken();
        assertThat(ledger.account(account)).contains(new FencedLedger.Account(account, requests, last));

        HttpResponse<String> late = post("/accounts/" + account + "/late-deposit?amount=100&token=" + first);
        assertThat(late.statusCode()).as(late.body()).isEqualTo(409);
        assertThat(json.readTree(late.body()).get("lastAccepted").asLong()).isEqualTo(last);
        assertThat(ledger.account(account))
                .as("the refused write changed nothing")
                .contains(new FencedLedger.Account(account, requests, last));
    }

    @Test
    void theReportRunsUnderItsShedLockLockAndNotWhileAnotherOwnerHoldsIt() throws Exception {
        ReportJob.Run run = await().atMost(Duration.ofSeconds(10))
                .until(reportJob::lastRun, Optional::isPresent)
                .orElseThrow();
        assertThat(run.key()).isEqualTo(REPORT_KEY);
        assertThat(run.fencingToken()).isPositive();

        long heldToken;
        try (LockLease held = locks.lock(REPORT_KEY).acquire(Duration.ofSeconds(5))) {
            heldToken = held.fencingToken();
            ReportJob.Run before = reportJob.lastRun().orElseThrow();
            assertThat(heldToken).isGreaterThan(before.fencingToken());
            await().during(Duration.ofMillis(1200))
                    .atMost(Duration.ofSeconds(3))
                    .until(() -> reportJob.lastRun().orElseThrow(), before::equals);
        }
        ReportJob.Run after = await().atMost(Duration.ofSeconds(5))
                .until(() -> reportJob.lastRun().orElseThrow(), r -> r.fencingToken() > heldToken);
        assertThat(after.key()).isEqualTo(REPORT_KEY);
    }

    @Test
    void theActuatorShowsTheLockMetersAndTheLocksmithHealth() throws Exception {
        assertThat(post("/accounts/m-" + UUID.randomUUID() + "/deposit?amount=5")
                        .statusCode())
                .isEqualTo(200);

        List<String> names = new ArrayList<>();
        json.readTree(get("/actuator/metrics").body()).get("names").forEach(n -> names.add(n.asString()));
        assertThat(names).contains("locksmith.lock.wait", "locksmith.lock.held", "locksmith.lock.leases.held");

        JsonNode waits = json.readTree(get("/actuator/metrics/locksmith.lock.wait?tag=outcome:acquired")
                .body());
        assertThat(waits.get("measurements").get(0).get("statistic").asString()).isEqualTo("COUNT");
        assertThat(waits.get("measurements").get(0).get("value").asDouble()).isGreaterThanOrEqualTo(1);

        JsonNode health = json.readTree(get("/actuator/health").body());
        assertThat(health.at("/components/locksmith/status").asString()).isEqualTo("UP");
        assertThat(health.at("/components/locksmith/details/probe").asString()).isEqualTo("granted");
    }

    private HttpResponse<String> post(String path) throws Exception {
        return send(HttpRequest.newBuilder(uri(path))
                .POST(HttpRequest.BodyPublishers.noBody())
                .build());
    }

    private HttpResponse<String> get(String path) throws Exception {
        return send(HttpRequest.newBuilder(uri(path)).GET().build());
    }

    private HttpResponse<String> send(HttpRequest request) throws Exception {
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }
}
