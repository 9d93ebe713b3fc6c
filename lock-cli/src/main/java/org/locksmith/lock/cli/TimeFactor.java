package org.locksmith.lock.cli;

import org.locksmith.lock.tck.TckTimings;

/** The {@code --time-factor} of {@code check} and {@code demo}: the TCK's slack factor for this run. */
final class TimeFactor {
    private TimeFactor() {}

    /**
     * Sets the TCK's slack factor (also passed on to the TCK's worker JVMs) if {@code factor} is given.
     *
     * @throws IllegalArgumentException if it is not from 1 to 100
     */
    static void apply(Double factor) {
        if (factor == null) {
            return;
        }
        if (factor.isNaN() || factor < 1.0 || factor > 100.0) {
            throw new IllegalArgumentException("--time-factor must be from 1 to 100, got " + factor);
        }
        System.setProperty(TckTimings.FACTOR_PROPERTY, Double.toString(factor));
    }
}
