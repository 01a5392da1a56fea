package idempotency

// Every statement the store sends is here (docs/architecture.md, "Where SQL
// lives"). A key's row is named by $1 (the API key id) and $2 (the
// Idempotency-Key) throughout.

// lockKey names a key's advisory lock from $1 (the API key id) and $2 (the
// Idempotency-Key). Two keys sharing a lock only make one wait. The id is
// written as uuid's text (lower case, with hyphens), as nodes of the
// builds before wrote it (they sent it as text).
const lockKey = `hashtextextended('broll:idem:' || $1::uuid::text || ':' || $2::text, 0)`

// unlockSQL lets the key's lock go; false if this session did not hold it.
const unlockSQL = `SELECT pg_advisory_unlock(` + lockKey + `)`

// storedSQL reads the key's row: the request it was first used with, and
// its answer once there is one.
const storedSQL = `SELECT request_hash, status, coalesce(content_type, ''), body FROM idempotency_keys
	WHERE api_key_id = $1 AND idem_key = $2`

// claimSQL tries the key's lock on this session and claims the key's row
// for request $3, in one statement, returning whether the lock was taken
// and the claim's token (the row's created_at; NULL: no claim, the key is
// someone else's or answered). Nobody runs without the lock. With it the
// statement writes a new row, or takes over one expired (older than $4) or
// unfinished, whose owner is gone: every owner holds the lock while it
// runs, so none does now. Without it, and only when the row has been left
// unfinished for longer than $5 (its owner's session kept by a server
// that cannot reach its client, or a request stuck that long), the
// session holding the lock is ended (waiting up to 5 s for it to go) and
// the lock tried again. A row written or taken without the lock would be
// taken by the lock's next holder for an orphan, and two requests with
// one key would run. The lock table is read only in that case: the CASE
// runs its subquery only when it is reached.
const claimSQL = `
	WITH l AS MATERIALIZED (SELECT pg_try_advisory_lock(` + lockKey + `) AS locked),
	gone AS MATERIALIZED (
		SELECT CASE WHEN NOT l.locked AND EXISTS (SELECT 1 FROM idempotency_keys WHERE api_key_id = $1 AND idem_key = $2
		                                          AND status IS NULL AND created_at < now() - $5::interval)
		THEN (SELECT coalesce(bool_or(pg_terminate_backend(p.pid, 5000)), false)
		      FROM pg_locks p
		      WHERE p.locktype = 'advisory' AND p.granted AND p.objsubid = 1 AND p.pid <> pg_backend_pid()
		        AND p.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		        AND ((p.classid::bigint << 32) | p.objid::bigint) = ` + lockKey + `)
		ELSE false END AS killed
		FROM l
	),
	l2 AS MATERIALIZED (SELECT l.locked OR (gone.killed AND pg_try_advisory_lock(` + lockKey + `)) AS locked FROM l, gone),
	mine AS (
		INSERT INTO idempotency_keys AS i (api_key_id, idem_key, request_hash)
		SELECT $1, $2, $3 FROM l2 WHERE l2.locked
		ON CONFLICT (api_key_id, idem_key) DO UPDATE
		SET request_hash = EXCLUDED.request_hash, status = NULL, content_type = NULL, body = NULL, created_at = now()
		WHERE i.created_at < now() - $4::interval OR i.status IS NULL
		RETURNING i.created_at
	)
	SELECT l2.locked, (SELECT created_at FROM mine) FROM l2`

// finishSQL stores the answer ($5 status, $6 content type, $7 sealed body)
// of the claim on the row of request $3 with token $4, if still unfinished.
const finishSQL = `UPDATE idempotency_keys SET status = $5, content_type = $6, body = $7
	WHERE api_key_id = $1 AND idem_key = $2 AND request_hash = $3 AND created_at = $4 AND status IS NULL`

// releaseSQL deletes the claim's row (request $3, token $4) if still
// unfinished: the next request with the key runs anew.
const releaseSQL = `DELETE FROM idempotency_keys
	WHERE api_key_id = $1 AND idem_key = $2 AND request_hash = $3 AND created_at = $4 AND status IS NULL`

// purgeSQL deletes up to 1000 rows older than $1.
const purgeSQL = `DELETE FROM idempotency_keys WHERE ctid = ANY (ARRAY(
	SELECT ctid FROM idempotency_keys WHERE created_at < now() - $1::interval LIMIT 1000))`
