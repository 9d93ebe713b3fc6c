package org.locksmith.example.accounts;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.shedlock.LocksmithLockProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * A report of the ledger's accounts, scheduled on every instance ({@code accounts.report.interval}, default 5 s) and
 * run by one at a time: ShedLock's {@code @SchedulerLock} takes the Locksmith key {@code shedlock:accounts-report}
 * through {@link LocksmithLockProvider}, skips the run when another instance holds it, and keeps it at least {@code
 * accounts.report.lock-at-least-for} (default 4 s, a little less than the interval, so that the other instances'
 * ticks of the same interval find it held and skip) and at most 30 s. The log line of each run shows its lease's
 * fencing token, which rises from run to run whichever instance runs it.
 *
 * <p>Not final: ShedLock wraps the bean in a proxy that takes the lock around {@link #report()}.
 */
@Component
public class ReportJob {
    private static final Logger log = LoggerFactory.getLogger(ReportJob.class);

    /**
     * One run of the report.
     *
     * @param key the Locksmith key the run held
     * @param fencingToken the fencing token of its lease
     * @param at when it ran
     * @param accounts how many accounts it saw
     * @param total their total balance
     */
    public record Run(String key, long fencingToken, Instant at, int accounts, long total) {}

    private final FencedLedger ledger;
    private final AtomicReference<Run> lastRun = new AtomicReference<>();

    /**
     * Created by Spring.
     *
     * @param ledger the accounts to report
     */
    public ReportJob(FencedLedger ledger) {
        this.ledger = ledger;
    }

    /**
     * Logs the accounts' count and total under the job's lock.
     *
     * @throws IllegalStateException if called without ShedLock's lock (not through the provider)
     */
    @Scheduled(fixedDelayString = "${accounts.report.interval:PT5S}")
    @SchedulerLock(
            name = "accounts-report",
            lockAtLeastFor = "${accounts.report.lock-at-least-for:PT4S}",
            lockAtMostFor = "PT30S")
    public void report() {
        LockLease lease = LocksmithLockProvider.currentLease()
                .orElseThrow(() -> new IllegalStateException("the report ran without its lock"));
        List<FencedLedger.Account> accounts = ledger.accounts();
        long total = accounts.stream().mapToLong(FencedLedger.Account::balance).sum();
        log.info(
                "report under lock {} (fencing token {}): {} accounts, total balance {}",
                lease.key(),
                lease.fencingToken(),
                accounts.size(),
                total);
        lastRun.set(new Run(lease.key(), lease.fencingToken(), Instant.now(), accounts.size(), total));
    }

    /** {@return the last run on this instance, or empty if none ran here yet} */
    public Optional<Run> lastRun() {
        return Optional.ofNullable(lastRun.get());
    }
}
