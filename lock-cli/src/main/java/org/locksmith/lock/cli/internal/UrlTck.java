package org.locksmith.lock.cli.internal;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestInstancePostProcessor;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;
import org.locksmith.lock.tck.LockTck;
import org.locksmith.lock.tck.TckTimings;

/**
 * The TCK against a deployment named by a URL, configured through JUnit configuration parameters so that several
 * URLs can be run from one JVM ({@code check}, the demo's table). It offers worker processes (the URL opens the
 * same kind of client in another JVM) but no fault hooks: those contracts are skipped, naming the fault.
 */
@ExtendWith(UrlTck.Configure.class)
public class UrlTck extends LockTck {

    /** Configuration parameter: the lock URL under test. */
    public static final String URL = "locksmith.cli.tck.url";
    /** Configuration parameter: the lease time the URL configures, in ms. */
    public static final String LEASE_MS = "locksmith.cli.tck.leaseMs";
    /** Configuration parameter: how long the store takes to notice a dead session, in ms. */
    public static final String SESSION_MS = "locksmith.cli.tck.sessionMs";
    /** Configuration parameter: the operation timeout the URL configures, in ms. */
    public static final String OPERATION_MS = "locksmith.cli.tck.operationMs";

    private String url;
    private TckTimings timings = TckTimings.defaults();

    @Override
    protected LockClient newClient() {
        return Locks.open(url);
    }

    @Override
    protected Optional<String> workerUrl() {
        return Optional.of(url);
    }

    @Override
    protected TckTimings timings() {
        return timings;
    }

    /** Reads the configuration parameters into each new test instance. */
    static final class Configure implements TestInstancePostProcessor {
        @Override
        public void postProcessTestInstance(Object instance, ExtensionContext context) {
            UrlTck tck = (UrlTck) instance;
            tck.url = context.getConfigurationParameter(URL)
                    .orElseThrow(() -> new IllegalStateException("configuration parameter " + URL + " not set"));
            TckTimings t = TckTimings.defaults();
            t = t.withLeaseTime(millis(context, LEASE_MS, t.leaseTime()));
            t = t.withSessionTimeout(millis(context, SESSION_MS, t.sessionTimeout()));
            t = t.withOperationTimeout(millis(context, OPERATION_MS, t.operationTimeout()));
            tck.timings = t;
        }

        private static Duration millis(ExtensionContext context, String name, Duration otherwise) {
            return context.getConfigurationParameter(name)
                    .map(v -> Duration.ofMillis(Long.parseLong(v)))
                    .orElse(otherwise);
        }
    }
}
