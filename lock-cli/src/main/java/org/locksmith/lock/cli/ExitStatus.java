package org.locksmith.lock.cli;

/**
 * The exit statuses of {@code locksmith}, following {@code sysexits.h} where it has a fitting code. {@code locksmith
 * run} otherwise exits with the status of the command it ran, so scripts can tell "the job failed" from "the job
 * did not run" from "the job ran unprotected".
 */
public final class ExitStatus {
    private ExitStatus() {}

    /** Everything went well (for {@code run}: the command exited 0). */
    public static final int OK = 0;

    /** {@code check}: at least one contract failed against the deployment, or every selected test was skipped. */
    public static final int CHECK_FAILED = 1;

    /**
     * EX_USAGE, only for what the user typed: unknown option, missing argument, malformed duration or lock URL,
     * unknown or invalid URL parameter, a bad key. Never for a failure of the store.
     */
    public static final int USAGE = 64;

    /** EX_UNAVAILABLE: the lock store could not be reached or failed (within its configured timeout). */
    public static final int STORE_UNAVAILABLE = 69;

    /**
     * EX_SOFTWARE: an internal error, any failure that is neither the user's input nor a {@link
     * org.locksmith.lock.LockBackendException} (a bug: please report it with the output of {@code --verbose}).
     */
    public static final int SOFTWARE = 70;

    /** EX_TEMPFAIL: {@code run} was not granted the lock within {@code --wait}; the command did not run. */
    public static final int NOT_GRANTED = 75;

    /**
     * {@code run} lost the lock while the command ran (the lease expired, the session died or the lock's state was
     * removed): the command's process group was sent SIGTERM, then SIGKILL after the grace period. Also when the loss is found
     * on release after the command ended: its work was not protected.
     */
    public static final int LOCK_LOST = 76;

    /** The command could not be started (not found or not executable), as a shell reports it. */
    public static final int COMMAND_NOT_STARTED = 127;

    /** Base of the status after SIGINT (130) or SIGTERM (143) to {@code locksmith}: 128 + the signal number. */
    public static final int SIGNAL_BASE = 128;
}
