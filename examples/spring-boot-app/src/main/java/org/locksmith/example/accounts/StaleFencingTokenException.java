package org.locksmith.example.accounts;

/**
 * A write to the {@link FencedLedger} refused because it carried a fencing token lower than one the account had
 * already accepted: the writer's lease ended and the lock has been granted since. The write had no effect.
 */
public class StaleFencingTokenException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The account written to. */
    private final String account;

    /** The refused write's token. */
    private final long token;

    /** The highest token the account had accepted. */
    private final long lastAccepted;

    /**
     * A refusal of a write with {@code token} to {@code account}, which had accepted {@code lastAccepted}.
     *
     * @param account the account
     * @param token the refused token
     * @param lastAccepted the token of the account's last accepted write, higher than token
     */
    public StaleFencingTokenException(String account, long token, long lastAccepted) {
        super("stale fencing token " + token + " for account " + account + ": it already accepted token "
                + lastAccepted);
        this.account = account;
        this.token = token;
        this.lastAccepted = lastAccepted;
    }

    /** {@return the account written to} */
    public String account() {
        return account;
    }

    /** {@return the refused write's token} */
    public long token() {
        return token;
    }

    /** {@return the token of the account's last accepted write} */
    public long lastAccepted() {
        return lastAccepted;
    }
}
