package org.locksmith.lock.tck.reference;

import java.io.IOException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.FileLockInterruptionException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;
import org.locksmith.lock.LockBackendException;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.spi.AcquireRequest;
import org.locksmith.lock.spi.BackendLease;
import org.locksmith.lock.spi.LockBackend;

/**
 * The multi-process reference backend: lock state in files of one directory that several JVMs share. Each key has a
 * guard file (locked with {@link FileChannel#lock()} around every read-modify-write), a state file ({@code owner
 * expiresAtMillis token}) that exists while the key is held, and a fencing counter file that is never deleted.
 * Expiry uses the wall clock, which all processes on one host share. Waiters poll (10 ms, jittered): files cannot
 * wake a waiter in another process, so BLOCKING_WAKEUP is not declared.
 */
final class FileLockBackend implements LockBackend {
    /** File locks are per process: threads of one JVM must also exclude each other around them. */
    private static final ConcurrentHashMap<Path, ReentrantLock> IN_PROCESS = new ConcurrentHashMap<>();

    static final Set<LockFeature> FEATURES = EnumSet.of(
            LockFeature.REENTRANT,
            LockFeature.FENCING,
            LockFeature.DURABLE_FENCING,
            LockFeature.LEASE_EXPIRY,
            LockFeature.AUTO_RENEWAL,
            LockFeature.LOSS_DETECTION);

    private final Path dir;
    private final Duration leaseTime;
    /** What {@link #leaseTime()} declares: the store's lease, except in the broken variant that claims more. */
    private final Duration declaredLease;

    /** Deliberate defects of broken variants, for the TCK's self-test; {@code NONE} is the reference. */
    enum Defect {
        NONE,
        /**
         * Checks an expired lease and takes it over outside the file lock, 50 ms later: racing contenders all win.
         * (With 20 ms, the racers of c01's killed-holder race, polling every 5-15 ms, all missed the window once on
         * a loaded 2-core CI machine, where a thread may not run for 20 ms.)
         */
        RACY_TAKEOVER,
        /** Takes over an expired lease with the expired holder's token instead of the next one. */
        TOKEN_REUSED_ON_TAKEOVER,
        /**
         * Declares BLOCKING_WAKEUP but wakes only the waiters of its own JVM (a monitor notified on release); waiters
         * in other processes poll every 150 ms.
         */
        LOCAL_WAKEUP_ONLY,
        /**
         * Keeps its lock table in a map of its own JVM and writes the state files through without ever reading them
         * back: threads of one process exclude each other, processes do not see each other's grants and releases.
         */
        PROCESS_LOCAL_LOCK_TABLE,
        /**
         * Reads a key's state file once and then trusts a cache of its own JVM (a "near cache") that only this JVM's
         * writes update: processes do not see each other's later grants and releases. Subtler than {@code
         * PROCESS_LOCAL_LOCK_TABLE}: a process that first saw another's grant waits for its expiry, so processes that
         * happen to run one after another do not overlap.
         */
        PROCESS_LOCAL_STATE_CACHE,
        /**
         * A server-side queue that hands the key over: the first waiter queues its owner id, and a release writes
         * the key to it as held without a lease until it claims it. A waiter that falls silent (paused, frozen)
         * keeps the key for as long as it is silent.
         */
        HANDOFF_WITHOUT_LEASE,
        /**
         * Declares SESSION_BOUND with a session timeout ({@code sessionMs}), but has no session: a dead process's
         * key frees only when its lease ({@code leaseMs}, longer) runs out.
         */
        DECLARES_SESSION_BOUND
    }

    /**
     * The lock table of {@code PROCESS_LOCAL_LOCK_TABLE} and the cache of {@code PROCESS_LOCAL_STATE_CACHE}: state file
     * to its content as this JVM last read or wrote it.
     */
    private static final ConcurrentHashMap<Path, Optional<State>> LOCAL_LOCK_TABLE = new ConcurrentHashMap<>();

    /** The {@code LOCAL_WAKEUP_ONLY} defect's wake-up: notified on every release in this JVM. */
    private static final Object RELEASED = new Object();

    private final Defect defect;

    /** The session timeout declared by {@code DECLARES_SESSION_BOUND}; zero otherwise. */
    private final Duration declaredSession;

    FileLockBackend(Path dir, Duration leaseTime) {
        this(dir, leaseTime, leaseTime, Defect.NONE);
    }

    FileLockBackend(Path dir, Duration leaseTime, Duration declaredLease, Defect defect) {
        this(dir, leaseTime, declaredLease, defect, Duration.ZERO);
    }

    /**
     * A broken variant when {@code declaredLease} differs (the core then trusts leases the store no longer keeps) or
     * {@code defect} is not {@code NONE}.
     */
    FileLockBackend(Path dir, Duration leaseTime, Duration declaredLease, Defect defect, Duration declaredSession) {
        this.declaredSession = defect == Defect.DECLARES_SESSION_BOUND ? declaredSession : Duration.ZERO;
        this.dir = dir;
        this.leaseTime = leaseTime;
        this.declaredLease = declaredLease;
        this.defect = defect;
    }

    @Override
    public String name() {
        if (defect == Defect.DECLARES_SESSION_BOUND && leaseTime.compareTo(declaredSession) <= 0) {
            return "reference-file-session-bound"; // the store keeps no lock longer than the declared session
        }
        if (defect != Defect.NONE) {
            return "broken-file-"
                    + defect.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
        }
        int declared = declaredLease.compareTo(leaseTime);
        return declared == 0
                ? "reference-file"
                : declared > 0 ? "broken-file-declares-longer-lease" : "broken-file-keeps-leases-longer";
    }

    @Override
    public Set<LockFeature> features() {
        if (defect == Defect.LOCAL_WAKEUP_ONLY) {
            Set<LockFeature> claimed = EnumSet.copyOf(FEATURES);
            claimed.add(LockFeature.BLOCKING_WAKEUP);
            return claimed;
        }
        if (defect == Defect.DECLARES_SESSION_BOUND) {
            Set<LockFeature> claimed = EnumSet.copyOf(FEATURES);
            claimed.add(LockFeature.SESSION_BOUND);
            return claimed;
        }
        return FEATURES;
    }

    @Override
    public Duration sessionTimeout() {
        return declaredSession;
    }

    @Override
    public Duration leaseTime() {
        return declaredLease;
    }

    @Override
    public Duration renewInterval() {
        // A session-bound store hears from a live client well within its session, whatever its leases.
        Duration third = leaseTime.dividedBy(3);
        return declaredSession.isZero() || third.compareTo(declaredSession.dividedBy(3)) <= 0
                ? third
                : declaredSession.dividedBy(3);
    }

    private record State(String owner, long expiresAtMillis, long token) {}

    private interface Action<T> {
        T run(Path base) throws IOException;
    }

    /** Keys become SHA-256 file names: any valid key maps to a safe, distinct name. */
    static String fileName(String key) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Runs {@code action} under the key's file lock. File channels are interruptible: I/O started with the interrupt
     * status set fails and closes the channel, so the status is set aside for the action and set again after (a
     * release or try by an interrupted thread still reaches the store); an interrupt that lands during the I/O still
     * closes the channel, see {@link #attempt}.
     */
    private <T> T guarded(String key, Action<T> action) {
        Path base = dir.resolve(fileName(key));
        Path guard = base.resolveSibling(base.getFileName() + ".lck");
        ReentrantLock local = IN_PROCESS.computeIfAbsent(guard, g -> new ReentrantLock());
        local.lock();
        boolean interrupted = Thread.interrupted();
        try (FileChannel ch = FileChannel.open(guard, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                FileLock ignored = ch.lock()) {
            return action.run(base);
        } catch (IOException e) {
            throw new LockBackendException("file store " + dir + " failed: " + e.getMessage(), e);
        } finally {
            local.unlock();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static Path state(Path base) {
        return base.resolveSibling(base.getFileName() + ".state");
    }

    private static Path fence(Path base) {
        return base.resolveSibling(base.getFileName() + ".fence");
    }

    /** The key's state as this backend sees it: from the file, or from the defects' per-JVM table or cache. */
    private State read(Path base) throws IOException {
        if (defect == Defect.PROCESS_LOCAL_STATE_CACHE) {
            Optional<State> cached = LOCAL_LOCK_TABLE.get(state(base));
            if (cached == null) {
                cached = Optional.ofNullable(readFile(base));
                LOCAL_LOCK_TABLE.put(state(base), cached);
            }
            return cached.orElse(null);
        }
        if (defect != Defect.PROCESS_LOCAL_LOCK_TABLE) {
            return readFile(base);
        }
        return LOCAL_LOCK_TABLE.getOrDefault(state(base), Optional.empty()).orElse(null);
    }

    /** Writes the key's state (and the defects' per-JVM table or cache). */
    private void writeState(Path base, String owner, long expiresAtMillis, long token) throws IOException {
        write(state(base), owner + " " + expiresAtMillis + " " + token);
        if (defect == Defect.PROCESS_LOCAL_LOCK_TABLE || defect == Defect.PROCESS_LOCAL_STATE_CACHE) {
            LOCAL_LOCK_TABLE.put(state(base), Optional.of(new State(owner, expiresAtMillis, token)));
        }
    }

    /** Deletes the key's state (and updates the defects' per-JVM table or cache). */
    private void deleteStateFile(Path base) throws IOException {
        Files.deleteIfExists(state(base));
        if (defect == Defect.PROCESS_LOCAL_LOCK_TABLE || defect == Defect.PROCESS_LOCAL_STATE_CACHE) {
            LOCAL_LOCK_TABLE.put(state(base), Optional.empty());
        }
    }

    private static State readFile(Path base) throws IOException {
        try {
            String[] f =
                    Files.readString(state(base), StandardCharsets.UTF_8).trim().split(" ");
            return new State(f[0], Long.parseLong(f[1]), Long.parseLong(f[2]));
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    /**
     * Writes {@code file} whole, through a temporary file of this write alone: the RACY_TAKEOVER defect writes
     * without the file lock, and racing writers that shared one temporary name failed on each other's rename
     * instead of showing the defect the TCK must catch (seen once in CI).
     */
    private static void write(Path file, String text) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + "."
                + Long.toHexString(ThreadLocalRandom.current().nextLong()) + ".tmp");
        Files.writeString(tmp, text, StandardCharsets.UTF_8);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    @Override
    public BackendLease acquire(AcquireRequest request) throws InterruptedException {
        while (true) {
            long sentAt = System.nanoTime();
            Grant g = attempt(request, sentAt);
            if (g != null) {
                return g;
            }
            long left = request.remainingNanos();
            if (request.isTry() || left <= 0 || request.isCancelled()) {
                if (defect == Defect.HANDOFF_WITHOUT_LEASE && !request.isTry()) {
                    leaveQueue(request);
                }
                return null;
            }
            if (defect == Defect.HANDOFF_WITHOUT_LEASE) {
                guarded(request.key(), base -> {
                    if (!Files.exists(queue(base))) {
                        write(queue(base), request.ownerId());
                    }
                    return null;
                });
            }
            if (defect == Defect.LOCAL_WAKEUP_ONLY) {
                synchronized (RELEASED) {
                    RELEASED.wait(Math.max(1, Math.min(left, 150_000_000L) / 1_000_000));
                }
                continue;
            }
            long pollNanos = 5_000_000 + ThreadLocalRandom.current().nextLong(10_000_000);
            Thread.sleep(Math.max(1, Math.min(left, pollNanos) / 1_000_000));
        }
    }

    /**
     * One attempt. An interrupt that lands inside file I/O closes the channel (ClosedByInterruptException,
     * FileLockInterruptionException), possibly after the grant was written: the grant is then undone, with the
     * interrupt status cleared so that this I/O can run, and the interrupt reported, leaving nothing held. A try
     * does not answer interrupts: it tries again and leaves the status set.
     */
    private Grant attempt(AcquireRequest request, long sentAt) throws InterruptedException {
        try {
            return tryGrant(request, sentAt);
        } catch (LockBackendException e) {
            if (!(e.getCause() instanceof ClosedByInterruptException
                    || e.getCause() instanceof FileLockInterruptionException)) {
                throw e;
            }
            Thread.interrupted();
            guarded(request.key(), base -> {
                State s = read(base);
                if (s != null && s.owner().equals(request.ownerId())) {
                    deleteStateFile(base);
                }
                return null;
            });
            if (request.isTry()) {
                try {
                    return tryGrant(request, sentAt);
                } finally {
                    Thread.currentThread().interrupt();
                }
            }
            InterruptedException interrupted = new InterruptedException("interrupted in file I/O");
            interrupted.initCause(e.getCause());
            throw interrupted;
        }
    }

    private Grant tryGrant(AcquireRequest request, long sentAt) {
        if (defect == Defect.RACY_TAKEOVER) {
            Grant racy = racyTakeover(request, sentAt);
            if (racy != null) {
                return racy;
            }
        }
        return guarded(request.key(), base -> {
            State s = read(base);
            long now = System.currentTimeMillis();
            if (defect == Defect.HANDOFF_WITHOUT_LEASE
                    && s != null
                    && s.owner().equals(request.ownerId())
                    && s.expiresAtMillis() == Long.MAX_VALUE) {
                // Handed over by a release: claim it, with a lease from now on.
                writeState(base, s.owner(), now + leaseTime.toMillis(), s.token());
                deleteIfQueued(base, request.ownerId());
                return new Grant(request.key(), request.ownerId(), s.token(), sentAt);
            }
            if (s != null && s.expiresAtMillis() > now) {
                return null;
            }
            Path fence = fence(base);
            long token =
                    Files.exists(fence) ? Long.parseLong(Files.readString(fence).trim()) + 1 : 1;
            if (defect == Defect.TOKEN_REUSED_ON_TAKEOVER && s != null) {
                token = s.token();
            }
            write(fence, Long.toString(token));
            writeState(base, request.ownerId(), now + leaseTime.toMillis(), token);
            return new Grant(request.key(), request.ownerId(), token, sentAt);
        });
    }

    /**
     * The {@code RACY_TAKEOVER} defect: sees an expired lease without the file lock, then, 20 ms later, writes its
     * own. Every contender that looks in between is granted too. Free and live keys go the correct way.
     */
    private Grant racyTakeover(AcquireRequest request, long sentAt) {
        Path base = dir.resolve(fileName(request.key()));
        try {
            State s = read(base);
            if (s == null || s.expiresAtMillis() > System.currentTimeMillis()) {
                return null;
            }
            Thread.sleep(50);
            long token = s.token() + 1;
            write(fence(base), Long.toString(token));
            write(
                    state(base),
                    request.ownerId() + " " + (System.currentTimeMillis() + leaseTime.toMillis()) + " " + token);
            return new Grant(request.key(), request.ownerId(), token, sentAt);
        } catch (IOException | RuntimeException e) {
            return null; // a torn read or a rename race: fall back to the guarded path
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private static Path queue(Path base) {
        return base.resolveSibling(base.getFileName() + ".next");
    }

    /** {@code HANDOFF_WITHOUT_LEASE}: deletes the queue entry if it is {@code owner}'s. */
    private static void deleteIfQueued(Path base, String owner) throws IOException {
        try {
            if (Files.readString(queue(base), StandardCharsets.UTF_8).trim().equals(owner)) {
                Files.deleteIfExists(queue(base));
            }
        } catch (NoSuchFileException e) {
            // not queued
        }
    }

    /** {@code HANDOFF_WITHOUT_LEASE}: a waiter that gives up leaves the queue and frees a key handed to it. */
    private void leaveQueue(AcquireRequest request) {
        guarded(request.key(), base -> {
            deleteIfQueued(base, request.ownerId());
            State s = read(base);
            if (s != null && s.owner().equals(request.ownerId()) && s.expiresAtMillis() == Long.MAX_VALUE) {
                deleteStateFile(base);
            }
            return null;
        });
    }

    /** Removes the key's state as an operator would (the DELETE_LOCK_STATE fault). */
    void deleteState(String key) {
        guarded(key, base -> {
            deleteStateFile(base);
            return null;
        });
    }

    int entries(String key) {
        return guarded(key, base -> Files.exists(state(base)) ? 1 : 0);
    }

    @Override
    public void close() {
        // no connections: each operation opens and closes its files
    }

    private final class Grant implements BackendLease {
        final String key;
        final String owner;
        final long token;
        final long confirmedAt;

        Grant(String key, String owner, long token, long confirmedAt) {
            this.key = key;
            this.owner = owner;
            this.token = token;
            this.confirmedAt = confirmedAt;
        }

        @Override
        public long fencingToken() {
            return token;
        }

        @Override
        public long confirmedAtNanos() {
            return confirmedAt;
        }

        @Override
        public boolean renew() {
            return guarded(key, base -> {
                State s = read(base);
                long now = System.currentTimeMillis();
                if (s == null || !s.owner().equals(owner) || s.expiresAtMillis() <= now) {
                    return false;
                }
                writeState(base, owner, now + leaseTime.toMillis(), token);
                return true;
            });
        }

        @Override
        public boolean release() {
            boolean released = guarded(key, base -> {
                State s = read(base);
                if (s == null || !s.owner().equals(owner)) {
                    return false;
                }
                boolean held = s.expiresAtMillis() > System.currentTimeMillis();
                if (defect == Defect.HANDOFF_WITHOUT_LEASE && Files.exists(queue(base))) {
                    // The bug: handed to the first waiter, held without a lease until it claims it.
                    String next = Files.readString(queue(base), StandardCharsets.UTF_8)
                            .trim();
                    Files.deleteIfExists(queue(base));
                    long token = Long.parseLong(Files.readString(fence(base)).trim()) + 1;
                    write(fence(base), Long.toString(token));
                    writeState(base, next, Long.MAX_VALUE, token);
                    return held;
                }
                deleteStateFile(base);
                return held;
            });
            if (defect == Defect.LOCAL_WAKEUP_ONLY) {
                synchronized (RELEASED) {
                    RELEASED.notifyAll();
                }
            }
            return released;
        }
    }
}
