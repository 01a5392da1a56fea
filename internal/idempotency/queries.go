package idempotency

// Every statement the store sends is here (docs/architecture.md, "Where SQL
// lives"). A key's row is named by $1 (the API key id) and $2 (the
// Idempotency-Key) throughout.

// lockKey names a key's advisory lock from $1 (the API key id) and $2 (the
// Idempotency-Key). Two keys sharing a lock only make one wait.
const lockKey = `hashtextextended('broll:idem:' || $1::text || ':' || $2::text, 0)`

// tryLockSQL takes the key's lock on this session if it is free.
const tryLockSQL = `SELECT pg_try_advisory_lock(` + lockKey + `)`

// unlockSQL lets the key's lock go; false if this session did not hold it.
const unlockSQL = `SELECT pg_advisory_unlock(` + lockKey + `)`

// storedSQL reads the key's row: the request it was first used with, and
// its answer once there is one.
const storedSQL = `SELECT request_hash, status, coalesce(content_type, ''), body FROM idempotency_keys
	WHERE api_key_id = $1 AND idem_key = $2`

// claimSQL writes the key's row for request $3 and returns its token (the
// row's created_at), run only while this session holds the key's lock: a
// new row, or one expired (older than $4), or one unfinished, whose owner
// is gone (every owner holds the lock while it runs, so none does now). No
// row: the key's request has finished and its answer is stored.
const claimSQL = `
	INSERT INTO idempotency_keys AS i (api_key_id, idem_key, request_hash) VALUES ($1, $2, $3)
	ON CONFLICT (api_key_id, idem_key) DO UPDATE
	SET request_hash = EXCLUDED.request_hash, status = NULL, content_type = NULL, body = NULL, created_at = now()
	WHERE i.created_at < now() - $4::interval OR i.status IS NULL
	RETURNING created_at`

// staleSQL takes over the key's row for request $3 when its request has
// run unfinished for longer than $4 although the key's lock is held (a
// session the server keeps for a client it cannot reach), and returns its
// token. It never inserts: a request without the lock must not write a
// row that the lock's holder would then take for an orphan.
const staleSQL = `
	UPDATE idempotency_keys SET request_hash = $3, status = NULL, content_type = NULL, body = NULL, created_at = now()
	WHERE api_key_id = $1 AND idem_key = $2 AND status IS NULL AND created_at < now() - $4::interval
	RETURNING created_at`

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
