package org.locksmith.lock.tck.internal;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.locksmith.lock.LockFeature;

/** The seventeen contracts of lock-tck/CONTRACTS.md, by number; test names start with their id. */
public final class Contracts {
    private Contracts() {}

    /** Contract names, index 0 = c01. */
    public static final List<String> NAMES = List.of(
            "Mutual exclusion",
            "Progress",
            "Reentrancy",
            "Ownership",
            "Deadlines",
            "Interruption",
            "Lease expiry",
            "Renewal",
            "Session binding",
            "Fencing",
            "Loss detection",
            "Fairness",
            "Close",
            "Keys",
            "Unavailable store",
            "Cleanup",
            "Detached leases");

    /**
     * The feature that gates each contract (CONTRACTS.md names it after the contract): a backend that does not declare
     * it has that contract's feature tests skipped, and the report says "not declared" for the contract, never
     * "pass", whatever the tests of the undeclared side did. Sub-features (DURABLE_FENCING inside c10,
     * SESSION_BOUND or LEASE_EXPIRY inside c11) do not gate their contract.
     */
    private static final Map<String, LockFeature> GATES = Map.of(
            "c03", LockFeature.REENTRANT,
            "c07", LockFeature.LEASE_EXPIRY,
            "c08", LockFeature.AUTO_RENEWAL,
            "c09", LockFeature.SESSION_BOUND,
            "c10", LockFeature.FENCING,
            "c11", LockFeature.LOSS_DETECTION,
            "c12", LockFeature.FAIR);

    /** The feature contract {@code id} ("c10") is gated by, or empty if every backend must keep it. */
    public static Optional<LockFeature> gate(String id) {
        return Optional.ofNullable(GATES.get(id));
    }

    /** "c05" for a test named "c05_deadlines_...", or null if the name does not start with a contract id. */
    public static String idOf(String testName) {
        if (testName != null
                && testName.length() >= 3
                && testName.charAt(0) == 'c'
                && Character.isDigit(testName.charAt(1))
                && Character.isDigit(testName.charAt(2))) {
            int n = Integer.parseInt(testName.substring(1, 3));
            if (n >= 1 && n <= NAMES.size()) {
                return testName.substring(0, 3);
            }
        }
        return null;
    }

    public static String id(int number) {
        return String.format(Locale.ROOT, "c%02d", number);
    }

    public static String name(String id) {
        return NAMES.get(Integer.parseInt(id.substring(1)) - 1);
    }

    /** "c05 Deadlines" for a test name, or the name itself. */
    public static String describe(String testName) {
        String id = idOf(testName);
        return id == null ? testName : id + " " + name(id);
    }
}
