-- Locksmith PostgreSQL lock schema (PostgreSQL 14+), for DBAs who create it themselves (then open clients with
-- createSchema=false); the backend runs this very file when createSchema=true. Replace every locksmith_lock by your
-- table name (the `table` setting: 1-54 characters from a-z, 0-9 and _, not starting with a digit); the acquire
-- function is always that name + "_acquire".
--
-- The key table: one row per key ever locked, holding the key's advisory lock id and its fencing counter. Keys are
-- stored as their SHA-256 (a 1024-character key may exceed a B-tree entry, and text cannot hold NUL).
--
-- The acquire function: one round trip grants a lock and issues its fencing token. In order: refuse a session that
-- holds a lease already (error LS001: a pooler in transaction mode shares server sessions between clients, and
-- session advisory locks are re-entrant per session); grant nothing during the restart hold-off (returns minus the
-- milliseconds left, minus 10); take the advisory lock, at once (p_wait_ms = 0, returns 0 if held) or waiting up to
-- lock_timeout; issue the token from the key's row, never below the server clock in microseconds (so tokens keep
-- rising if the table is lost or a replica without the last commits takes over); return -1 if the key's row names
-- another id (the caller's cached id is stale: it maps again). A token equal to the server clock is committed without
-- waiting for the disk (synchronous_commit = off): a crash may lose it, and the next token after the restart, at
-- least the clock then, is greater still. A token above the clock (the key's counter ran ahead of it: the clock was
-- set back, or a failover went to a server whose clock is behind) is flushed before the client sees the grant
-- (synchronous_commit = on): no clock would cover it. Last, the session is marked with the lease's owner and given
-- idle_session_timeout (its value before is kept in locksmith.idle, for the release to restore), and o_held_us says
-- how long after the statement began (on the server) it ended: the session was proven alive then, which may be long
-- after the request was sent.
--
-- Privileges the client needs: SELECT, INSERT, UPDATE on the table and EXECUTE on the function (plus CREATE on the
-- schema for createSchema=true).
--
-- Format: a statement ends with a line holding only ";" (a ";" at the end of any other line, as in the function
-- body, belongs to the statement). Lines starting with "--" are comments.

CREATE TABLE IF NOT EXISTS locksmith_lock (key_hash bytea PRIMARY KEY, id bigint NOT NULL UNIQUE,
  token bigint NOT NULL DEFAULT 0)
;

CREATE OR REPLACE FUNCTION locksmith_lock_acquire(p_hash bytea, p_id bigint, p_owner text, p_wait_ms bigint,
  p_holdoff_ms bigint, p_session_ms bigint, OUT o_token bigint, OUT o_held_us bigint) LANGUAGE plpgsql AS $f$
DECLARE v_up_ms bigint; v_token bigint; v_now bigint;
BEGIN
  IF current_setting('locksmith.lease', true) <> '' THEN
    RAISE EXCEPTION USING ERRCODE = 'LS001', MESSAGE = 'this session holds Locksmith lease '
      || current_setting('locksmith.lease') || ' already: server sessions are shared between clients (a pooler in'
      || ' transaction mode?); use session pooling or connect directly';
  END IF;
  IF p_holdoff_ms > 0 THEN
    v_up_ms := (extract(epoch FROM clock_timestamp() - pg_postmaster_start_time()) * 1000)::bigint;
    IF v_up_ms < p_holdoff_ms THEN o_token := v_up_ms - p_holdoff_ms - 10; RETURN; END IF;
  END IF;
  IF p_wait_ms <= 0 THEN
    IF NOT pg_try_advisory_lock(p_id) THEN o_token := 0; RETURN; END IF;
  ELSE
    PERFORM set_config('lock_timeout', p_wait_ms || 'ms', true);
    PERFORM pg_advisory_lock(p_id);
  END IF;
  v_now := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;
  UPDATE locksmith_lock SET token = greatest(token + 1, v_now)
    WHERE key_hash = p_hash AND id = p_id RETURNING token INTO v_token;
  IF v_token IS NULL THEN
    BEGIN
      INSERT INTO locksmith_lock (key_hash, id, token) VALUES (p_hash, p_id, v_now) RETURNING token INTO v_token;
    EXCEPTION WHEN unique_violation THEN
      PERFORM pg_advisory_unlock(p_id);
      o_token := -1;
      RETURN;
    END;
  END IF;
  PERFORM set_config('synchronous_commit', CASE WHEN v_token > v_now THEN 'on' ELSE 'off' END, true);
  PERFORM set_config('locksmith.lease', p_owner, false);
  PERFORM set_config('locksmith.idle', current_setting('idle_session_timeout'), false);
  PERFORM set_config('idle_session_timeout', p_session_ms || 'ms', false);
  o_token := v_token;
  o_held_us := (extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000000)::bigint;
END
$f$
;
