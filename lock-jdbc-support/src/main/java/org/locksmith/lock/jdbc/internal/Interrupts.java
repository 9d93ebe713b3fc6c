package org.locksmith.lock.jdbc.internal;

import java.util.function.Supplier;

/** Store calls that must not see the calling thread's interrupt status. */
public final class Interrupts {
    private Interrupts() {}

    /**
     * Runs a store call that does not wait with the thread's interrupt status set aside, and sets it again after
     * (also when the call throws). With the status set, HikariCP refuses to lend a connection ("Interrupted during
     * connection acquisition") and a virtual thread's socket closes on its first read, so a release, a check or a try
     * by an interrupted thread would fail, or end its session, although nothing waits.
     *
     * @return what {@code call} returned
     */
    public static <T> T uninterrupted(Supplier<T> call) {
        boolean interrupted = Thread.interrupted();
        try {
            return call.get();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
