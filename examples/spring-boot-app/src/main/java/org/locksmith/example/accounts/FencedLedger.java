package org.locksmith.example.accounts;

import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.springframework.stereotype.Component;

/**
 * The resource the account locks protect: balances that accept a write only with a fencing token no lower than the
 * last one they accepted for that account.
 *
 * <p>A lock alone cannot protect a write: a holder paused past its lease (a long GC pause, a partition) still believes
 * it holds the lock when it resumes, while the store has already granted the key, with a higher token, to someone
 * else. Its late write then reaches the resource after the new holder's. The resource must be the judge: it remembers
 * the highest token it has seen per account and refuses anything older with {@link StaleFencingTokenException}. Equal
 * tokens are accepted, so that one holder may write several times under one lease.
 *
 * <p>Kept in memory here, so one instance of the service owns it. In a database the same rule is one conditional
 * update ({@code UPDATE accounts SET balance = balance + ?, last_token = ? WHERE id = ? AND last_token <= ?}, refused
 * when it updates no row). Thread-safe: each account's check and write are one atomic step.
 */
@Component
public class FencedLedger {

    /**
     * An account as the ledger last accepted it.
     *
     * @param id the account
     * @param balance its balance after the last accepted write
     * @param lastToken the fencing token of the last accepted write
     */
    public record Account(String id, long balance, long lastToken) {}

    private final ConcurrentMap<String, Account> accounts = new ConcurrentHashMap<>();

    /** An empty ledger. */
    public FencedLedger() {}

    /**
     * Adds {@code amount} to account {@code id}, creating it at zero, if {@code token} is no lower than the token of
     * the last write the account accepted.
     *
     * @param id the account
     * @param amount what to add (may be negative)
     * @param token the fencing token of the lease under which the caller writes
     * @return the account after the write
     * @throws StaleFencingTokenException if the account has accepted a write with a higher token; nothing is written
     * @throws ArithmeticException if the balance would overflow; nothing is written
     * @throws NullPointerException if id is null
     */
    public Account deposit(String id, long amount, long token) {
        Objects.requireNonNull(id, "id");
        return accounts.compute(id, (key, current) -> {
            if (current == null) {
                return new Account(key, amount, token);
            }
            if (token < current.lastToken()) {
                throw new StaleFencingTokenException(key, token, current.lastToken());
            }
            return new Account(key, Math.addExact(current.balance(), amount), token);
        });
    }

    /**
     * {@return account {@code id} as last written, or empty if it was never written}
     *
     * @param id the account
     */
    public Optional<Account> account(String id) {
        return Optional.ofNullable(accounts.get(id));
    }

    /** {@return every account, by id; each as last written, the set as of some moment during the call} */
    public List<Account> accounts() {
        return accounts.values().stream()
                .sorted(Comparator.comparing(Account::id))
                .toList();
    }
}
