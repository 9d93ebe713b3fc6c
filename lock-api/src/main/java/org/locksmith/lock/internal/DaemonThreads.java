package org.locksmith.lock.internal;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/** Names every thread the library starts ({@code locksmith-renewer-1}) and makes it a daemon. */
final class DaemonThreads implements ThreadFactory {
    private static final AtomicInteger SEQUENCE = new AtomicInteger();
    private final String role;

    DaemonThreads(String role) {
        this.role = role;
    }

    @Override
    public Thread newThread(Runnable task) {
        Thread t = new Thread(task, "locksmith-" + role + "-" + SEQUENCE.incrementAndGet());
        t.setDaemon(true);
        return t;
    }
}
