package org.locksmith.lock.zookeeper.internal;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.BackgroundCallback;

/**
 * Deletes the parent node of each key this client released alone, once the key has been idle here for {@link
 * #IDLE_MS}. The server's container reaper would delete it too, but runs once a minute by default and deletes at
 * most {@code znode.container.maxPerMinute} (10,000) a minute: a service that locks more than ~170 new keys a second
 * (such as {@code order:<uuid>}) would pile up empty parents. Waiting for the key to be idle keeps the delete off
 * a key that is locked again and again (each delete would cost the next acquire two round trips to create the
 * parent again). Best effort, in the background: a parent that has children again is not deleted (the server
 * refuses), and one missed here is left to the reaper.
 */
final class IdleParents implements AutoCloseable {
    static final long IDLE_MS = 2_000;
    private static final BackgroundCallback IGNORE = (client, event) -> {
        // NOTEMPTY (locked again, by anyone), NONODE (gone already), connection loss: the reaper's job then
    };

    private final CuratorFramework curator;
    /** Parents of this client's held and waiting nodes, which are never idle. */
    private final Supplier<Set<String>> inUse;

    private final Map<String, Long> released = new ConcurrentHashMap<>();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private final ScheduledThreadPoolExecutor timer;

    IdleParents(CuratorFramework curator, Supplier<Set<String>> inUse) {
        this.curator = curator;
        this.inUse = inUse;
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "locksmith-zookeeper-idle-parents");
            t.setDaemon(true);
            return t;
        });
        timer.setKeepAliveTime(IDLE_MS, TimeUnit.MILLISECONDS);
        timer.allowCoreThreadTimeOut(true); // no thread while nothing is pending
    }

    /** Notes that this client released the last node it saw under {@code parent}. */
    void released(String parent) {
        released.put(parent, System.nanoTime());
        if (scheduled.compareAndSet(false, true)) {
            schedule();
        }
    }

    private void schedule() {
        try {
            timer.schedule(this::sweep, IDLE_MS, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closed) {
            // closing: the reaper deletes what is left
        }
    }

    private void sweep() {
        long idleSince = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(IDLE_MS);
        Set<String> busy = null;
        for (Map.Entry<String, Long> entry : released.entrySet()) {
            String parent = entry.getKey();
            if (entry.getValue() - idleSince <= 0 && released.remove(parent, entry.getValue())) {
                busy = busy == null ? inUse.get() : busy;
                if (!busy.contains(parent)) {
                    delete(parent);
                }
            }
        }
        scheduled.set(false);
        if (!released.isEmpty() && scheduled.compareAndSet(false, true)) {
            schedule();
        }
    }

    private void delete(String parent) {
        if (!curator.getZookeeperClient().isConnected()) {
            return;
        }
        try {
            curator.delete().inBackground(IGNORE).forPath(parent);
        } catch (Exception e) {
            // closed meanwhile: the reaper's job
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
        released.clear();
    }
}
