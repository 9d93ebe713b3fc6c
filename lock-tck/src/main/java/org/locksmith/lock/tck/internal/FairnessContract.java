package org.locksmith.lock.tck.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.LockLease;

/** Contract 12: with FAIR, waiters are granted in the order they started waiting. */
public final class FairnessContract {
    private final TckEnv env;

    public FairnessContract(TckEnv env) {
        this.env = env;
    }

    public void arrivalOrder() throws Exception {
        env.requireFeature(LockFeature.FAIR);
        LockClient holder = env.client("H");
        String key = env.key("fair");
        int waiters = 5;
        List<LockClient> clients = new ArrayList<>();
        for (int i = 0; i < waiters; i++) {
            clients.add(env.client("W" + i));
        }
        LockLease held = holder.lock(key).acquire(Duration.ofSeconds(5));
        List<Integer> order = Collections.synchronizedList(new ArrayList<>());
        List<Future<Void>> futures = new ArrayList<>();
        OptionalInt base = env.storeEntries(key);
        for (int i = 0; i < waiters; i++) {
            int index = i;
            LockClient c = clients.get(i);
            futures.add(env.fork(() -> {
                try (LockLease l = c.lock(key).acquire(Duration.ofSeconds(30))) {
                    order.add(index);
                }
                return null;
            }));
            // Arrival order must be unambiguous: wait until the store shows this waiter queued where it can be
            // seen; otherwise give it a fixed head start before the next one arrives.
            if (base.isPresent()) {
                int expected = base.getAsInt() + i + 1;
                Awaitility.await()
                        .atMost(Duration.ofSeconds(5))
                        .pollInterval(Duration.ofMillis(5))
                        .until(() -> env.storeEntries(key).orElse(expected) >= expected);
                Thread.sleep(20);
            } else {
                Thread.sleep(150);
            }
        }
        held.release();
        for (Future<Void> f : futures) {
            f.get(TckEnv.allow(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);
        }
        List<Integer> expected = new ArrayList<>();
        for (int i = 0; i < waiters; i++) {
            expected.add(i);
        }
        assertThat(order)
                .as(env.at(holder, key) + "grant order of waiters W0..W" + (waiters - 1)
                        + " that arrived in that order (FAIR declared)")
                .containsExactlyElementsOf(expected);
    }
}
