package org.locksmith.lock.tck.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.tck.LockFaults;

/** Contract 10: fencing tokens rise strictly per key, across clients, crashes and (durable) store restarts. */
public final class FencingContract {
    private final TckEnv env;

    public FencingContract(TckEnv env) {
        this.env = env;
    }

    public void tokensRiseAcrossClients() throws Exception {
        List<LockClient> clients = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            clients.add(env.client("F" + i));
        }
        String key = env.key("fencing");
        String other = env.key("fencing-other");
        long last = Long.MIN_VALUE;
        for (int i = 0; i < 12; i++) {
            LockClient c = clients.get(i % clients.size());
            try (LockLease lease = c.lock(key).acquire(Duration.ofSeconds(5))) {
                long token = lease.fencingToken();
                assertThat(lease.fencingToken())
                        .as(env.at(c, key) + "token is stable for one grant")
                        .isEqualTo(token);
                assertThat(token)
                        .as(env.at(c, key) + "grant " + i + "'s token must exceed the previous grant's " + last)
                        .isGreaterThan(last);
                last = token;
            }
            // Grants of another key must not disturb this key's sequence.
            clients.get((i + 1) % clients.size()).lock(other).tryAcquire().ifPresent(LockLease::release);
        }
    }

    public void undeclaredFencingThrows() throws Exception {
        LockClient a = env.client("A");
        String key = env.key("no-fencing");
        try (LockLease lease = a.lock(key).acquire(Duration.ofSeconds(5))) {
            assertThatThrownBy(lease::fencingToken)
                    .as(env.at(a, key) + "fencingToken() without FENCING")
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("fencing");
        }
        assertThat(a.features())
                .as(env.at(a, key) + "DURABLE_FENCING declared without FENCING")
                .doesNotContain(LockFeature.DURABLE_FENCING);
    }

    /**
     * A holder crashes (a killed worker process, else a killed session, else an abandoned unrenewed lease); the next
     * grant's token must exceed the crashed holder's.
     */
    public void tokensRiseAcrossCrashedHolder() throws Exception {
        String key = env.key("fencing-crash");
        LockClient observer = env.client("observer");
        boolean frees = env.has(LockFeature.LEASE_EXPIRY) || env.has(LockFeature.SESSION_BOUND);
        long crashedToken;
        String how;
        if (env.workerUrl().isPresent() && frees) {
            Path dir = Files.createTempDirectory("locksmith-tck-");
            env.closeAtEnd(() -> MutualExclusionContract.deleteTree(dir));
            crashedToken = KilledHolder.run(env, dir, env.workerUrl().get(), key, observer)
                    .token();
            how = "its holder process was killed";
        } else if (env.has(LockFeature.SESSION_BOUND) && env.canInflict(LockFaults.Fault.KILL_SESSION)) {
            LockClient a = env.client("A");
            crashedToken = a.lock(key).acquire(Duration.ofSeconds(5)).fencingToken();
            env.faults().killSession(a);
            how = "its holder's session was killed";
        } else if (env.has(LockFeature.LEASE_EXPIRY) && !env.has(LockFeature.AUTO_RENEWAL)) {
            LockClient a = env.client("A");
            crashedToken = a.lock(key).acquire(Duration.ofSeconds(5)).fencingToken();
            how = "its holder abandoned an unrenewed lease";
        } else {
            Assumptions.abort(TckEnv.NEEDS + "a way to crash a holder: workerUrl() with LEASE_EXPIRY or SESSION_BOUND, "
                    + "fault KILL_SESSION, or LEASE_EXPIRY without AUTO_RENEWAL");
            return;
        }
        Duration bound = TckEnv.allow(env.timings()
                .leaseTime()
                .multipliedBy(2)
                .plus(env.timings().sessionTimeout())
                .plus(env.timings().handoff()));
        try (LockLease next =
                Probes.acquireWithin(env, observer, key, bound, "after " + how).value()) {
            assertThat(next.fencingToken())
                    .as(env.at(observer, key) + "token of the grant after " + how + " must exceed the crashed "
                            + "holder's token " + crashedToken)
                    .isGreaterThan(crashedToken);
        }
    }

    public void tokensRiseAcrossStoreRestart(LockFaults.Fault restart) throws Exception {
        LockClient a = env.client("A");
        String key = env.key("fencing-restart");
        long before;
        try (LockLease lease = a.lock(key).acquire(Duration.ofSeconds(5))) {
            before = lease.fencingToken();
        }
        StoreRestartContract.restart(env, restart);
        LockClient b = env.client("B");
        Duration bound = TckEnv.allow(env.timings().operationTimeout().multipliedBy(3));
        try (LockLease lease = Probes.acquireWithin(env, b, key, bound, "after a store restart")
                .value()) {
            assertThat(lease.fencingToken())
                    .as(env.at(b, key) + "token after a store restart (" + restart + ") must exceed the token before"
                            + " it, " + before)
                    .isGreaterThan(before);
        }
    }
}
