package org.locksmith.lock.tck.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How the fault-load contract turns worker output into validity intervals, and which of them overlap. */
class FaultLoadIntervalsTest {

    private static List<FaultLoadContract.Interval> both(List<String> first, List<String> second) {
        List<FaultLoadContract.Interval> all = new ArrayList<>(FaultLoadContract.intervals(0, first));
        all.addAll(FaultLoadContract.intervals(1, second));
        all.sort(Comparator.comparingLong(FaultLoadContract.Interval::start));
        return all;
    }

    /**
     * A grant read by a worker that resumed after its session ran out: it was never seen valid (no V line), so it was
     * valid at no moment, and must not count as an overlap with the grant that followed the session's end (the
     * PostgreSQL CI run of 5c58435..1785799 failed on exactly this).
     */
    @Test
    void aGrantNeverSeenValidOverlapsNothing() {
        List<String> resumed = List.of("G 157 100 5000", "L 157");
        List<String> next = List.of("G 196 200 4000", "V 196 4000", "V 196 6000", "E 196");
        assertThat(FaultLoadContract.overlaps(both(resumed, next))).isEmpty();
    }

    /** A grant seen valid once, inside another worker's interval, is an overlap, even of zero length. */
    @Test
    void aSingleValidLookInsideAnotherIntervalIsAnOverlap() {
        List<String> resumed = List.of("G 157 100 5000", "V 157 5000", "L 157");
        List<String> next = List.of("G 196 200 4000", "V 196 4000", "V 196 6000", "E 196");
        assertThat(FaultLoadContract.overlaps(both(resumed, next))).hasSize(1);
    }
}
