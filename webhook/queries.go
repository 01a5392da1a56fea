package webhook

// Every statement webhook sends is here (docs/architecture.md, "Where SQL
// lives"). The events themselves are written by their writers, in their
// own transactions (internal/outbox); the fan-out of an event to its
// endpoints' deliveries is the trigger migrations/functions/webhook_fanout.sql.

// Endpoints.

// ownerSQL narrows webhook_endpoints (no alias) to an owner: $1 the
// account, $2 the root key or NULL (Owner.key).
const ownerSQL = `account_id = $1 AND ($2::uuid IS NULL OR root_key_id = $2)`

// endpointColumns are a webhook_endpoints row (no alias) as Endpoint holds
// it, by name, with its root key's label and whether that key is revoked.
const endpointColumns = `id, url, description, events, enabled, failing_since, disabled_at, disabled_reason, created_at,
	root_key_id,
	(SELECT k.label FROM api_keys k WHERE k.id = webhook_endpoints.root_key_id) AS root_key_label,
	EXISTS (SELECT 1 FROM api_keys k WHERE k.id = webhook_endpoints.root_key_id AND k.revoked_at IS NOT NULL) AS root_revoked`

// rootLiveSQL holds of a webhook_endpoints row (no alias) whose root key is
// not revoked: one of a revoked root key has no secret left and stays off.
const rootLiveSQL = `NOT EXISTS (SELECT 1 FROM api_keys k WHERE k.id = webhook_endpoints.root_key_id AND k.revoked_at IS NOT NULL)`

// endpointsLockSQL serialises the creations of root key $1's endpoints for
// the rest of the transaction, so that its cap holds: an advisory lock
// rather than the key's row, which revocations and settings changes lock.
const endpointsLockSQL = `SELECT pg_advisory_xact_lock(hashtextextended('broll:webhook-endpoints:' || $1::text, 0))`

// endpointCountSQL counts root key $1's endpoints, enabled or not, for its
// cap (webhook_endpoints_root_key_idx).
const endpointCountSQL = `SELECT count(*) FROM webhook_endpoints WHERE root_key_id = $1`

// insertEndpointSQL registers an endpoint of account $1 owned by $2, which
// must be a live root key of that account (the foreign key alone would
// accept any key): $3 url, $4 description, $5 events. No row: no such root
// key. The key's row is share-locked until the creation commits, so a
// revocation under way is waited for (and then refuses it), and one that
// comes after waits for the endpoint, which its trigger then ends.
const insertEndpointSQL = `INSERT INTO webhook_endpoints (account_id, root_key_id, url, description, events)
	SELECT $1, k.id, $3, $4, $5 FROM api_keys k
	WHERE k.id = $2 AND k.account_id = $1 AND k.kind = 'root' AND k.revoked_at IS NULL
	FOR SHARE OF k
	RETURNING ` + endpointColumns

// insertSecretSQL stores secret $2 (sealed) of endpoint $1.
const insertSecretSQL = `INSERT INTO webhook_secrets (endpoint_id, secret) VALUES ($1, $2)`

// endpointsSQL lists the owner's endpoints, oldest first.
const endpointsSQL = `SELECT ` + endpointColumns + ` FROM webhook_endpoints
	WHERE ` + ownerSQL + ` ORDER BY created_at, id`

// endpointSQL reads the owner's endpoint $3.
const endpointSQL = `SELECT ` + endpointColumns + ` FROM webhook_endpoints
	WHERE id = $3 AND ` + ownerSQL

// deleteEndpointSQL removes the owner's endpoint $3 with its secrets,
// deliveries and log (ON DELETE CASCADE).
const deleteEndpointSQL = `DELETE FROM webhook_endpoints WHERE id = $3 AND ` + ownerSQL

// enableEndpointSQL turns the owner's endpoint $3 back on, its failure run
// started afresh, unless its root key is revoked. No row: no such endpoint,
// or one of a revoked root key.
const enableEndpointSQL = `UPDATE webhook_endpoints
	SET enabled = true, failing_since = NULL, disabled_at = NULL, disabled_reason = ''
	WHERE id = $3 AND ` + ownerSQL + ` AND ` + rootLiveSQL + ` RETURNING ` + endpointColumns

// disableEndpointSQL turns the owner's endpoint $3 off, for reason $4; one
// already off keeps its time and reason.
const disableEndpointSQL = `UPDATE webhook_endpoints
	SET disabled_at = CASE WHEN enabled THEN now() ELSE disabled_at END,
	    disabled_reason = CASE WHEN enabled THEN $4 ELSE disabled_reason END,
	    enabled = false
	WHERE id = $3 AND ` + ownerSQL + ` RETURNING ` + endpointColumns

// rotationEndSQL locks the owner's endpoint $3 for a rotation and returns
// when its current secrets stop signing: now plus the overlap $4.
const rotationEndSQL = `SELECT now() + $4::interval FROM webhook_endpoints
	WHERE id = $3 AND ` + ownerSQL + ` FOR UPDATE`

// expireSecretsSQL makes endpoint $1's secrets stop signing at $2 at the
// latest.
const expireSecretsSQL = `UPDATE webhook_secrets SET expires_at = least(coalesce(expires_at, $2), $2)
	WHERE endpoint_id = $1`

// activeSecretsSQL counts the secrets of endpoint $1 that still sign.
const activeSecretsSQL = `SELECT count(*) FROM webhook_secrets WHERE endpoint_id = $1
	AND (expires_at IS NULL OR expires_at > now())`

// pingSQL writes event $4 (ping, trace id $5, "" for none) for the owner's
// endpoint $3 and a delivery of it to that endpoint alone, and returns the
// event's id; no row: no such endpoint.
const pingSQL = `
	WITH e AS (SELECT id, account_id FROM webhook_endpoints WHERE id = $3 AND ` + ownerSQL + `),
	ev AS (
		INSERT INTO webhook_events (account_id, type, trace_id, data)
		SELECT account_id, $4, nullif($5, ''), jsonb_build_object('endpoint_id', id) FROM e
		RETURNING id
	), d AS (
		INSERT INTO webhook_deliveries (endpoint_id, event_id) SELECT e.id, ev.id FROM e, ev
	)
	SELECT id FROM ev`

// Signing secrets.

// plaintextSecretsSQL takes up to $1 secrets still stored in plaintext,
// skipping rows another sealer holds.
const plaintextSecretsSQL = `SELECT id, endpoint_id, secret FROM webhook_secrets
	WHERE secret LIKE 'whsec\_%' LIMIT $1 FOR UPDATE SKIP LOCKED`

// sealSecretsSQL replaces the secrets $1 with their sealed forms $2.
const sealSecretsSQL = `UPDATE webhook_secrets w SET secret = v.secret
	FROM unnest($1::bigint[], $2::text[]) AS v(id, secret) WHERE w.id = v.id`

// Delivery.

// claimSQL takes up to $1 due deliveries of enabled endpoints, fairly:
// at most $3 in flight per endpoint and $4 per account, across workers
// (leased_until), accounts taken in turn. It pushes their next attempt out
// by the lease $2, marks them in flight for as long, and returns what
// sending needs. The final lock re-checks that a delivery is still due, so
// one another worker claimed meanwhile is skipped, not sent twice.
const claimSQL = `
WITH inflight AS (
    SELECT d.endpoint_id, count(*) AS n FROM webhook_deliveries d
    WHERE d.state = 'pending' AND d.leased_until > now()
    GROUP BY d.endpoint_id
), busy AS (
    SELECT e.account_id, sum(i.n) AS n FROM inflight i JOIN webhook_endpoints e ON e.id = i.endpoint_id
    GROUP BY e.account_id
), candidates AS (
    SELECT due.id, e.account_id, due.next_attempt_at
    FROM webhook_endpoints e
    LEFT JOIN inflight i ON i.endpoint_id = e.id
    CROSS JOIN LATERAL (
        SELECT d2.id, d2.next_attempt_at FROM webhook_deliveries d2
        WHERE d2.endpoint_id = e.id AND d2.state = 'pending' AND d2.next_attempt_at <= now()
        ORDER BY d2.next_attempt_at, d2.id
        LIMIT greatest($3 - coalesce(i.n, 0), 0)
    ) due
    WHERE e.enabled
), ranked AS (
    SELECT c.id, c.next_attempt_at,
           row_number() OVER (PARTITION BY c.account_id ORDER BY c.next_attempt_at, c.id) + coalesce(b.n, 0) AS turn
    FROM candidates c LEFT JOIN busy b ON b.account_id = c.account_id
), picked AS (
    SELECT r.id FROM ranked r WHERE r.turn <= $4 ORDER BY r.turn, r.next_attempt_at, r.id LIMIT $1
), locked AS (
    SELECT d3.id FROM webhook_deliveries d3
    WHERE d3.id IN (SELECT id FROM picked) AND d3.state = 'pending' AND d3.next_attempt_at <= now()
    FOR UPDATE SKIP LOCKED
), c AS (
    UPDATE webhook_deliveries d SET attempts = d.attempts + 1,
        next_attempt_at = now() + $2::interval, leased_until = now() + $2::interval
    FROM locked WHERE d.id = locked.id
    RETURNING d.id, d.endpoint_id, d.event_id, d.attempts
)
SELECT c.id, c.endpoint_id::text, e.url, c.attempts, ev.id, ev.type, ev.livemode, ev.data, ev.created_at,
       coalesce(ev.trace_id, ''),
       array(SELECT s.secret FROM webhook_secrets s WHERE s.endpoint_id = e.id
             AND (s.expires_at IS NULL OR s.expires_at > now()) ORDER BY s.id DESC)
FROM c JOIN webhook_endpoints e ON e.id = c.endpoint_id JOIN webhook_events ev ON ev.id = c.event_id`

// releaseSQL gives claimed delivery $1 back undone, due at once, its
// attempt not counted: the worker stopped in the middle of it. $2 is the
// claim's attempt number: a delivery claimed again since (the lease
// lapsed while this worker stalled) is the new claimer's, and stays so.
const releaseSQL = `UPDATE webhook_deliveries SET attempts = greatest(attempts - 1, 0),
	next_attempt_at = now(), leased_until = NULL WHERE id = $1 AND state = 'pending' AND attempts = $2`

// recordSQL logs an attempt and moves its delivery and endpoint on, in one
// statement; a delivery given up meanwhile (its root key was revoked) is
// not made pending again: $1 delivery, $2 endpoint, $3 status (NULL: none), $4 ms,
// $5 error, $6 success, $7 pause before the next attempt, $8 how long to
// retry and to tolerate an endpoint's failures, $9 that time in words, $10
// the claim's attempt number. A failed attempt whose delivery was claimed
// again since (this worker stalled past its lease) leaves the delivery to
// its new claimer: clearing that claimer's lease or rescheduling the
// delivery would let a third worker send it while the second still does.
// A success is recorded whoever holds the delivery: it arrived.
const recordSQL = `
WITH log AS (
    INSERT INTO webhook_attempts (delivery_id, endpoint_id, status_code, duration_ms, error)
    VALUES ($1, $2::uuid, $3, $4, $5)
), del AS (
    UPDATE webhook_deliveries SET
        state = CASE WHEN $6 THEN 'delivered'
                     WHEN state <> 'pending' THEN state
                     WHEN created_at < now() - $8::interval THEN 'failed' ELSE 'pending' END,
        delivered_at = CASE WHEN $6 THEN now() END,
        leased_until = NULL,
        next_attempt_at = CASE WHEN $6 THEN next_attempt_at ELSE now() + $7::interval END
    WHERE id = $1 AND ($6 OR attempts = $10)
)
UPDATE webhook_endpoints SET
    failing_since = CASE WHEN $6 THEN NULL ELSE coalesce(failing_since, now()) END,
    enabled = enabled AND ($6 OR coalesce(failing_since, now()) > now() - $8::interval),
    disabled_at = CASE WHEN enabled AND NOT $6 AND coalesce(failing_since, now()) <= now() - $8::interval
                       THEN now() ELSE disabled_at END,
    disabled_reason = CASE WHEN enabled AND NOT $6 AND coalesce(failing_since, now()) <= now() - $8::interval
                           THEN 'disabled automatically: every delivery failed for ' || $9::text
                           ELSE disabled_reason END
WHERE id = $2::uuid`

// deliveriesSQL reads endpoint $1's latest $2 attempts, newest first, each
// with its delivery's state now.
const deliveriesSQL = `
	SELECT ev.id, ev.type, a.attempted_at, a.status_code, a.duration_ms, a.error, d.state, d.attempts,
	       CASE WHEN d.state = 'pending' THEN d.next_attempt_at END
	FROM webhook_attempts a
	JOIN webhook_deliveries d ON d.id = a.delivery_id
	JOIN webhook_events ev ON ev.id = d.event_id
	WHERE a.endpoint_id = $1
	ORDER BY a.attempted_at DESC, a.id DESC LIMIT $2`

// giveUpEndedSQL gives up (failed) up to $1 pending deliveries of endpoints
// a root key's revocation ended (migrations/functions/webhook_root_revoked.sql):
// no worker claims them, as their endpoint is off for good.
const giveUpEndedSQL = `UPDATE webhook_deliveries SET state = 'failed', leased_until = NULL WHERE id IN (
	SELECT d.id FROM webhook_endpoints e
	JOIN api_keys k ON k.id = e.root_key_id AND k.revoked_at IS NOT NULL
	JOIN webhook_deliveries d ON d.endpoint_id = e.id AND d.state = 'pending'
	WHERE NOT e.enabled
	LIMIT $1)`

// pruneSQL deletes up to $2 events older than $1, with their deliveries and
// attempts, keeping those with a delivery still pending.
const pruneSQL = `DELETE FROM webhook_events WHERE id IN (
	SELECT ev.id FROM webhook_events ev
	WHERE ev.created_at < now() - $1::interval
	  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ev.id AND d.state = 'pending')
	LIMIT $2)`

// lagSQL is how many seconds the most overdue pending delivery of an
// enabled endpoint is past its due time, 0 when none is due (Lag). The
// inner query walks webhook_deliveries_due_idx from its oldest entry.
const lagSQL = `SELECT coalesce(extract(epoch FROM now() - min(due.next_attempt_at)), 0)::float8 FROM (
    SELECT d.next_attempt_at FROM webhook_deliveries d
    JOIN webhook_endpoints e ON e.id = d.endpoint_id
    WHERE d.state = 'pending' AND e.enabled AND d.next_attempt_at <= now()
    ORDER BY d.next_attempt_at LIMIT 1
) due`
