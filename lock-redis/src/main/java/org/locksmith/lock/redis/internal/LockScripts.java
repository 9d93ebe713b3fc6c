package org.locksmith.lock.redis.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Supplier;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisNoScriptException;

/**
 * The Lua scripts that decide, inside Redis, who holds a lock. Each runs atomically, so the owner check and the
 * change it guards can never be separated by another client's command.
 *
 * <p>The lock hash has the fields {@code o} (owner id), {@code f} (fencing token of the current or last grant),
 * {@code w} (set when someone waited during this grant, so that the release wakes one waiter) and {@code r} (the
 * owner of the last release, kept briefly after it so that a repeated release is recognized).
 *
 * <p>Fencing tokens: {@code max(last + 1, server TIME in microseconds)}. While the hash exists, {@code last + 1}
 * keeps them strictly rising; when it is gone (expired, deleted, or a restart without persistence lost it), the
 * server clock has moved on by at least the time it took to lose it, and every earlier token was at most the clock
 * of its grant. The one case where a token runs ahead of the clock (more than one grant of a key within one
 * microsecond) is closed by the release script: it keeps the released hash alive until the clock has passed it.
 * So tokens rise across restarts with no permanent key, as long as the server clock does not step backwards
 * (a failover to a node whose clock lags would break that; see the README).
 *
 * <p>Scripts run with {@code EVALSHA}; the SHA-1 is computed here, so nothing has to be loaded first. On
 * {@code NOSCRIPT} (a restarted server, a failover, {@code SCRIPT FLUSH}, a new cluster node) the call falls back to
 * {@code EVAL} once, which also caches the script on that server again.
 */
public final class LockScripts {

    // Redis before 5 replicated scripts verbatim and refused writes after TIME; effects replication fixes that.
    private static final String EFFECTS = "if redis.replicate_commands then redis.replicate_commands() end\n";

    /**
     * KEYS[1] hash; ARGV[1] owner, ARGV[2] lease ms, ARGV[3] '1' if the caller will wait when refused, ARGV[4] '1'
     * if it waited already, ARGV[5] restart hold-off ms. Returns {1, token} when granted, {0, remaining lease ms
     * of the holder} when held, and {0, hold-off ms left, the server second at which it ends} during the hold-off. A refused waiter marks the grant contended so that its release pushes a wake-up; a waiter that
     * gets the lock marks its own grant, since others may still wait behind it.
     *
     * <p>A free key is granted only once the server has been up for the hold-off: a server restarted without its
     * data may have forgotten a grant whose holder still believes it holds. Until then the reply is {0, ms left, end}.
     * Redis counts {@code uptime_in_seconds} as the difference of two whole-second clocks, which flips to 1 at the
     * first wall-clock second after the start (measured: 312 ms after a start at .688), so one second is taken off
     * it: the wait is never shorter than the hold-off, and up to a second longer. {@code INFO} costs 10-15 us of
     * server time (it builds its text, which Lua then copies and matches), so it is read only when {@code LASTSAVE}
     * cannot prove the hold-off over: the server sets its last-save time to its start time and only moves it
     * forward, so the time since the last save, less the same second, never exceeds the uptime. On a server that
     * does not save, or saves less often than the hold-off, a grant of a free key then costs one {@code LASTSAVE}
     * (well under a microsecond); a user whose ACL refuses {@code LASTSAVE} falls back to {@code INFO}.
     */
    static final String ACQUIRE = EFFECTS + """
            local h = redis.call('HMGET', KEYS[1], 'o', 'f')
            if h[1] then
              if h[1] == ARGV[1] then
                redis.call('PEXPIRE', KEYS[1], ARGV[2])
                return {1, h[2]}
              end
              if ARGV[3] == '1' then redis.call('HSET', KEYS[1], 'w', '1') end
              return {0, redis.call('PTTL', KEYS[1])}
            end
            local t = redis.call('TIME')
            local holdOff = tonumber(ARGV[5])
            if holdOff > 0 then
              local saved = redis.pcall('LASTSAVE')
              if type(saved) ~= 'number' or (tonumber(t[1]) - saved - 1) * 1000 < holdOff then
                local up = tonumber(string.match(redis.call('INFO', 'server'), 'uptime_in_seconds:(%d+)')) - 1
                if up * 1000 < holdOff then
                  return {0, holdOff - up * 1000, tonumber(t[1]) - up + math.ceil(holdOff / 1000)}
                end
              end
            end
            local token = tonumber(t[1]) * 1000000 + tonumber(t[2])
            local last = tonumber(h[2])
            if last and last >= token then token = last + 1 end
            local s = string.format('%.0f', token)
            redis.call('HSET', KEYS[1], 'o', ARGV[1], 'f', s)
            if ARGV[4] == '1' then redis.call('HSET', KEYS[1], 'w', '1') end
            redis.call('PEXPIRE', KEYS[1], ARGV[2])
            return {1, s}
            """;

    /**
     * KEYS[1] hash, KEYS[2] wake list; ARGV[1] owner, ARGV[2] wake-list TTL ms. Returns 1 if released, 0 if the
     * owner no longer held it. Pushes one wake-up (at most one pending) if someone waited during this grant.
     *
     * <p>Idempotent: a release whose reply was lost is sent again, and must not then report the lease lost. So the
     * hash is not deleted but kept for ARGV[2] ms (longer while the token is ahead of the clock) with the field
     * {@code r} = the owner that released it last; a repeated release by that owner returns 1 again, even after
     * another owner took the key meanwhile. Owner ids are unique per grant, so nobody else can match it.
     */
    static final String RELEASE = EFFECTS + """
            local h = redis.call('HMGET', KEYS[1], 'o', 'f', 'w', 'r')
            if h[1] ~= ARGV[1] then
              if h[4] == ARGV[1] then return 1 end
              return 0
            end
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
            local f = tonumber(h[2]) or 0
            local keep = tonumber(ARGV[2])
            if f >= now then keep = math.max(keep, math.floor((f - now) / 1000) + 2) end
            redis.call('HDEL', KEYS[1], 'o', 'w')
            redis.call('HSET', KEYS[1], 'r', ARGV[1])
            redis.call('PEXPIRE', KEYS[1], string.format('%.0f', keep))
            if h[3] then
              if redis.call('LLEN', KEYS[2]) == 0 then redis.call('RPUSH', KEYS[2], '1') end
              redis.call('PEXPIRE', KEYS[2], ARGV[2])
            end
            return 1
            """;

    /**
     * KEYS[1..n] hashes (one slot); ARGV[1] lease ms, ARGV[i+1] owner of KEYS[i]. Extends every lease still held
     * by its owner; returns the 1-based indexes of those that are not.
     */
    static final String RENEW = """
            local lost = {}
            for i = 1, #KEYS do
              if redis.call('HGET', KEYS[i], 'o') == ARGV[i + 1] then
                redis.call('PEXPIRE', KEYS[i], ARGV[1])
              else
                lost[#lost + 1] = i
              end
            end
            return lost
            """;

    /**
     * {@link #RENEW} for keys in many slots of one cluster node: KEYS[1] one of them (it routes the call to the
     * node); ARGV[1] TTL ms, ARGV[2] n, ARGV[3..n+2] the hashes, ARGV[n+3..2n+2] their owners. A cluster refuses
     * declared keys of different slots (CROSSSLOT) whatever the flags, so the hashes travel as arguments, which the
     * Redis 7.0+ flag {@code allow-cross-slot-keys} lets the script access while this node serves them (else the
     * script fails and the caller renews those leases one slot per call); before 7.0 {@link #RENEW_NODE_UNFLAGGED}
     * does the same. Returns the 1-based indexes lost.
     */
    static final String RENEW_NODE = """
            #!lua flags=allow-cross-slot-keys
            local n = tonumber(ARGV[2])
            local lost = {}
            for i = 1, n do
              local key = ARGV[2 + i]
              if redis.call('HGET', key, 'o') == ARGV[2 + n + i] then
                redis.call('PEXPIRE', key, ARGV[1])
              else
                lost[#lost + 1] = i
              end
            end
            return lost
            """;

    /**
     * {@link #RENEW_NODE} without its flags line, for servers before Redis 7.0, which know no script flags (the line
     * does not compile there) and need none: each command of a script may touch any key the node serves, as long as
     * the call's declared keys are of one slot. Redis 7.0+ refuses it (undeclared keys of other slots).
     */
    static final String RENEW_NODE_UNFLAGGED = RENEW_NODE.substring(RENEW_NODE.indexOf('\n') + 1);

    /**
     * KEYS[1] hash, KEYS[2] wake list; ARGV[1] TTL ms. A waiter that consumed a wake-up but gave up (interrupt,
     * deadline, close) passes it on: to the list if the lock is free, else to the holder's release.
     */
    static final String PASS_WAKEUP = """
            if redis.call('HEXISTS', KEYS[1], 'o') == 1 then
              redis.call('HSET', KEYS[1], 'w', '1')
              return 0
            end
            if redis.call('LLEN', KEYS[2]) == 0 then redis.call('RPUSH', KEYS[2], '1') end
            redis.call('PEXPIRE', KEYS[2], ARGV[1])
            return 1
            """;

    /** KEYS[1] a cancel list; ARGV[1] TTL ms. Unblocks the waiter blocked on it; the TTL bounds a leftover. */
    static final String SIGNAL = """
            if redis.call('LLEN', KEYS[1]) == 0 then redis.call('RPUSH', KEYS[1], '1') end
            redis.call('PEXPIRE', KEYS[1], ARGV[1])
            return 1
            """;

    static final String ACQUIRE_SHA = sha1(ACQUIRE);
    static final String RELEASE_SHA = sha1(RELEASE);
    static final String RENEW_SHA = sha1(RENEW);
    static final String PASS_WAKEUP_SHA = sha1(PASS_WAKEUP);
    static final String SIGNAL_SHA = sha1(SIGNAL);

    private LockScripts() {}

    /**
     * The acquire script's text, for lock-bench, which measures what the client adds to the store's own round trips
     * by sending the same scripts through a bare connection. Not API: this package is not exported.
     */
    public static String acquireScript() {
        return ACQUIRE;
    }

    /** The release script's text; see {@link #acquireScript()}. */
    public static String releaseScript() {
        return RELEASE;
    }

    /** Every script, for loading them ahead of the first call on a standalone server. */
    static List<String> all() {
        return List.of(ACQUIRE, RELEASE, RENEW, PASS_WAKEUP, SIGNAL);
    }

    /**
     * Runs a script by its SHA-1, falling back to EVAL (which caches it again) if the server lost it. Scripts never
     * wait, so they run {@link #uninterrupted}.
     */
    static Object run(UnifiedJedis jedis, String script, String sha, List<String> keys, List<String> args) {
        return uninterrupted(() -> {
            try {
                return jedis.evalsha(sha, keys, args);
            } catch (JedisNoScriptException e) {
                return jedis.eval(script, keys, args);
            }
        });
    }

    /**
     * Runs a command that does not wait with the thread's interrupt status cleared, and sets it again after. On a
     * virtual thread, socket I/O with the status set closes the socket ("Closed by interrupt"), so a release or a
     * try by an interrupted thread would fail although nothing waits; an interrupt is for waits, and the core and
     * the waiter see it once the command has returned.
     */
    static <T> T uninterrupted(Supplier<T> command) {
        boolean interrupted = Thread.interrupted();
        try {
            return command.get();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static String sha1(String script) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-1").digest(script.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required by every JDK", e);
        }
    }
}
