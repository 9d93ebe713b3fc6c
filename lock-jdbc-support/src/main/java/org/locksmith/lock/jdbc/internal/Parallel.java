package org.locksmith.lock.jdbc.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;

/** Work on several items at once, for calls that must not wait for each other (session checks). */
public final class Parallel {
    private Parallel() {}

    /**
     * Runs {@code work} on every item: the first on the calling thread, the others on {@code executor} (on the
     * calling thread too if it rejects them: the backend is closing), and returns once every call has ended, through
     * interrupts (the interrupt status is set again on return), as the SPI asks of a renewal. A call that threw is
     * passed to {@code failed} with what it threw and does not stop the others; one on the calling thread propagates.
     */
    public static <T> void forEach(
            List<T> items, Consumer<T> work, ExecutorService executor, Consumer<Throwable> failed) {
        List<Future<?>> others = new ArrayList<>(Math.max(0, items.size() - 1));
        for (int i = 1; i < items.size(); i++) {
            T item = items.get(i);
            try {
                others.add(executor.submit(() -> work.accept(item)));
            } catch (RejectedExecutionException closing) {
                work.accept(item);
            }
        }
        if (!items.isEmpty()) {
            work.accept(items.get(0));
        }
        boolean interrupted = false;
        for (Future<?> f : others) {
            while (true) {
                try {
                    f.get();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true; // return only once no call is in flight, as the SPI asks
                } catch (ExecutionException e) {
                    failed.accept(e.getCause());
                    break;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
