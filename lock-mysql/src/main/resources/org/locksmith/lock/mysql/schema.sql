-- Locksmith MySQL/MariaDB lock tables, for DBAs who create the schema themselves (then open clients with
-- createSchema=false). Replace locksmith_lock by your table name (the `table` setting: 1-57 characters from
-- A-Z, a-z, 0-9 and _); the fence table is always that name + "_fence", the shard table that name + "_shard".
-- Works on MySQL 8.0+ and MariaDB 10.6+.
--
-- Keys are identified by the SHA-256 of their UTF-8 bytes (BINARY(32)): no collation can make two keys equal
-- (case, accents, trailing spaces), and 32 bytes fit every index limit, which 1024 utf8mb4 characters do not.
-- The key itself is kept for operators only.
--
-- The shard table holds one row per database: an id the first client writes (keys are routed by it, not by how a
-- client spells its connection) and the shard map every client of the table must agree on.
--
-- Privileges the client needs: SELECT, INSERT, UPDATE on the three tables (plus CREATE for createSchema=true); the
-- named strategy uses GET_LOCK/RELEASE_LOCK, which need none.
--
-- Format (the backend runs this very file): a statement ends with a line holding only ";". Lines starting with
-- "--" are comments.

CREATE TABLE IF NOT EXISTS `locksmith_lock` (
  key_hash   BINARY(32)    NOT NULL COMMENT 'SHA-256 of the UTF-8 key',
  lock_key   VARCHAR(1024) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL COMMENT 'the key, for operators',
  owner      VARCHAR(128)  CHARACTER SET ascii COLLATE ascii_bin NULL COMMENT 'lease strategy: owner of the current grant',
  expires_at DATETIME(6)   NOT NULL DEFAULT '1970-01-01 00:00:01' COMMENT 'lease strategy: expiry, UTC, by the server clock',
  token      BIGINT        NOT NULL DEFAULT 0 COMMENT 'lease strategy: fencing token of the current grant',
  PRIMARY KEY (key_hash)
) ENGINE=InnoDB
;

CREATE TABLE IF NOT EXISTS `locksmith_lock_fence` (
  key_hash BINARY(32) NOT NULL COMMENT 'SHA-256 of the UTF-8 key',
  token    BIGINT     NOT NULL COMMENT 'last fencing token issued for the key',
  PRIMARY KEY (key_hash)
) ENGINE=InnoDB
;

CREATE TABLE IF NOT EXISTS `locksmith_lock_shard` (
  id        TINYINT  NOT NULL COMMENT 'always 1: one row per database',
  shard_id  CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL COMMENT 'identity of this database, random, written once',
  shard_map TEXT     CHARACTER SET ascii COLLATE ascii_bin NULL COMMENT 'sorted shard_id of every database the clients of this table use, comma-separated',
  PRIMARY KEY (id)
) ENGINE=InnoDB
;
