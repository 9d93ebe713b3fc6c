package org.locksmith.lock.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A few named daemon threads running one body each; the first failure of any of them fails the scenario, and
 * {@link #join} bounds how long stopping may take.
 */
final class Workers {
    interface Body {
        void run(int index) throws Exception;
    }

    private final List<Thread> threads = new ArrayList<>();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    Workers(String name, int count, Body body) {
        for (int i = 0; i < count; i++) {
            int index = i;
            Thread t = new Thread(
                    () -> {
                        try {
                            body.run(index);
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                        }
                    },
                    name + "-" + i);
            t.setDaemon(true);
            threads.add(t);
        }
    }

    Workers start() {
        threads.forEach(Thread::start);
        return this;
    }

    /** Throws the first failure of any worker so far. */
    void check() {
        Throwable e = failure.get();
        if (e != null) {
            throw new IllegalStateException("a benchmark thread failed: " + e, e);
        }
    }

    /** Waits for every worker to end, at most {@code seconds} in all, then {@link #check}s. */
    void join(long seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        for (Thread t : threads) {
            long left = deadline - System.nanoTime();
            if (left > 0) {
                TimeUnit.NANOSECONDS.timedJoin(t, left);
            }
            if (t.isAlive()) {
                check();
                throw new IllegalStateException(t.getName() + " did not stop within " + seconds + " s");
            }
        }
        check();
    }
}
