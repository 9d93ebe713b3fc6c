package org.locksmith.example.accounts;

import java.time.Duration;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockTimeoutException;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * Deposits to accounts, one writer per account at a time across every instance of the service:
 *
 * <ul>
 *   <li>{@code POST /accounts/{id}/deposit?amount=N} takes the Locksmith lock {@code account:{id}} (waiting up to 5
 *       s), writes to the {@link FencedLedger} with the lease's fencing token and returns the {@link Deposit}; 503 if
 *       the lock is not granted in time;
 *   <li>{@code POST /accounts/{id}/late-deposit?amount=N&token=T} writes with a token given by the caller, without the
 *       lock: what a holder whose lease ran out during a pause does when it resumes. 409 when the ledger has accepted
 *       a higher token since, which is the point of fencing;
 *   <li>{@code GET /accounts/{id}}: the account as the ledger last accepted it; 404 if it was never written.
 * </ul>
 *
 * A non-positive amount is 400.
 */
@RestController
@RequestMapping("/accounts")
public class AccountController {
    private static final Duration LOCK_WAIT = Duration.ofSeconds(5);

    /**
     * What a deposit did.
     *
     * @param account the account
     * @param amount the amount added
     * @param fencingToken the token the write carried
     * @param balance the account's balance after it
     */
    public record Deposit(String account, long amount, long fencingToken, long balance) {}

    private final LockClient locks;
    private final FencedLedger ledger;

    /**
     * Created by Spring.
     *
     * @param locks the starter's lock client
     * @param ledger the balances the locks protect
     */
    public AccountController(LockClient locks, FencedLedger ledger) {
        this.locks = locks;
        this.ledger = ledger;
    }

    /**
     * Adds {@code amount} to account {@code id} under the account's lock, with the lease's fencing token.
     *
     * @param id the account
     * @param amount what to add, positive
     * @return the deposit, with its token and the balance after it
     * @throws InterruptedException if the request thread is interrupted while it waits for the lock
     */
    @PostMapping("/{id}/deposit")
    public Deposit deposit(@PathVariable String id, @RequestParam long amount) throws InterruptedException {
        requirePositive(amount);
        try (LockLease lease = locks.lock("account:" + id).acquire(LOCK_WAIT)) {
            long token = lease.fencingToken();
            return new Deposit(
                    id, amount, token, ledger.deposit(id, amount, token).balance());
        }
    }

    /**
     * Adds {@code amount} to account {@code id} with the caller's {@code token} and no lock: a late write.
     *
     * @param id the account
     * @param amount what to add, positive
     * @param token the token of a lease the caller once held
     * @return the deposit, if the ledger accepted the token
     */
    @PostMapping("/{id}/late-deposit")
    public Deposit lateDeposit(@PathVariable String id, @RequestParam long amount, @RequestParam long token) {
        requirePositive(amount);
        return new Deposit(id, amount, token, ledger.deposit(id, amount, token).balance());
    }

    /**
     * The account as last written.
     *
     * @param id the account
     * @return the account
     */
    @GetMapping("/{id}")
    public FencedLedger.Account account(@PathVariable String id) {
        return ledger.account(id)
                .orElseThrow(() -> new ResponseStatusException(HttpStatus.NOT_FOUND, "no account " + id));
    }

    @ExceptionHandler
    ProblemDetail staleToken(StaleFencingTokenException e) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT, e.getMessage());
        problem.setProperty("token", e.token());
        problem.setProperty("lastAccepted", e.lastAccepted());
        return problem;
    }

    @ExceptionHandler
    ProblemDetail lockNotGranted(LockTimeoutException e) {
        return ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE, e.getMessage());
    }

    private static void requirePositive(long amount) {
        if (amount <= 0) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "amount must be positive, was " + amount);
        }
    }
}
