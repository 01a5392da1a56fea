package license

import "broll/internal/outbox"

// Every statement the licence package sends is here (docs/architecture.md,
// "Where SQL lives").

// licenseColumns are what a licence document is made of: the purchase p,
// its clip v, its account a and its key k (NULL for a legacy purchase), in
// licenseRow's order.
const licenseColumns = `p.license_id, p.livemode, p.license_revoked_at, p.license_revoked_reason,
	v.id, v.title, k.licensee_name, a.name, p.purchased_at, p.price_cents, p.id`

// licenseSQL reads licence $1. A malformed id is still looked up (as one
// that matches nothing), so an unknown id costs what a known one does.
const licenseSQL = `SELECT ` + licenseColumns + `
	FROM purchases p JOIN videos v ON v.id = p.video_id JOIN accounts a ON a.id = p.account_id
	LEFT JOIN api_keys k ON k.id = p.api_key_id
	WHERE p.license_id = $1`

// revokeSQL revokes licence $1 for reason $2, unless it is revoked already,
// and writes license.revoked in the same statement: the event names the
// purchase's key, so it reaches that key's root's endpoints only (a legacy
// purchase's, which names none, every endpoint of the account). $3 is the
// verify URL without the id. One row per licence revoked (none: unknown or
// revoked before).
const revokeSQL = `
WITH r AS (
    UPDATE purchases p SET license_revoked_at = now(), license_revoked_reason = $2
    WHERE p.license_id = $1 AND p.license_revoked_at IS NULL
    RETURNING p.id, p.account_id, p.api_key_id, p.video_id, p.livemode, p.license_id,
              p.license_revoked_at, p.license_revoked_reason
), ev AS (
    INSERT INTO webhook_events (account_id, type, livemode, data)
    SELECT r.account_id, '` + outbox.LicenseRevoked + `', r.livemode, jsonb_build_object(
        'key', CASE WHEN k.id IS NULL THEN NULL
                    ELSE jsonb_build_object('id', k.id, 'kind', k.kind, 'label', k.label) END,
        'license', jsonb_build_object('id', r.license_id, 'status', 'revoked',
            'revoked_reason', r.license_revoked_reason, 'revoked_at', r.license_revoked_at,
            'verify_url', $3 || r.license_id),
        'purchase_id', r.id, 'video_id', r.video_id)
    FROM r LEFT JOIN api_keys k ON k.id = r.api_key_id
)
SELECT r.license_id FROM r`

// Stamped copies (stamp.go, table license_stamps).

// stampSourceSQL reads what purchase $1's stamp is made from: its licence,
// mode, whether the licence was revoked, and clip file, and the stamp
// recorded for it (NULLs: none), current when it was made from the clip's
// file as it is now.
const stampSourceSQL = `
	SELECT p.license_id, p.livemode, p.license_revoked_at IS NOT NULL, v.media_key, s.purchase_id IS NOT NULL,
	       coalesce(s.media_key, ''), coalesce(s.source_key = v.media_key, false)
	FROM purchases p JOIN videos v ON v.id = p.video_id
	LEFT JOIN license_stamps s ON s.purchase_id = p.id
	WHERE p.id = $1`

// recordStampSQL records purchase $1's stamp, made from $2: the copy $3 of
// $4 bytes, or no copy and why ($5); unless the purchase's licence was
// revoked meanwhile (no row: the copy made is removed).
const recordStampSQL = `
	INSERT INTO license_stamps (purchase_id, source_key, media_key, bytes, reason)
	SELECT $1, $2, $3, $4, $5 FROM purchases p WHERE p.id = $1 AND p.license_revoked_at IS NULL
	ON CONFLICT (purchase_id) DO UPDATE SET source_key = EXCLUDED.source_key, media_key = EXCLUDED.media_key,
	    bytes = EXCLUDED.bytes, reason = EXCLUDED.reason, stamped_at = now()`

// unstampableSQL records that purchase $1's file could not be stamped, for
// reason $2, so that its downloads serve the original without asking again.
const unstampableSQL = `
	INSERT INTO license_stamps (purchase_id, source_key, reason)
	SELECT p.id, v.media_key, $2 FROM purchases p JOIN videos v ON v.id = p.video_id WHERE p.id = $1
	ON CONFLICT (purchase_id) DO UPDATE SET source_key = EXCLUDED.source_key, media_key = NULL,
	    bytes = NULL, reason = EXCLUDED.reason, stamped_at = now()`

// unstampedSQL keeps those of purchases $1 that need a stamp: live, their
// licence not revoked, and without one made from their clip's current file.
const unstampedSQL = `
	SELECT p.id FROM purchases p JOIN videos v ON v.id = p.video_id
	LEFT JOIN license_stamps s ON s.purchase_id = p.id AND s.source_key = v.media_key
	WHERE p.id = ANY($1) AND p.livemode AND p.license_revoked_at IS NULL AND s.purchase_id IS NULL`

// lostStampsSQL lists up to $2 purchases made since $1 that need a stamp
// (as unstampedSQL says), oldest first: those whose requests were lost (the
// queue was away when they were asked for). It reads each account's
// purchases of the window by its (account_id, purchased_at) index and looks
// each one's stamp up by its key: the OFFSET 0 and LIMIT 1 keep the
// planner from flattening the two subqueries into scans of whole tables
// (a hash of every stamp ever made, whose cost grows with the history
// rather than with the window; BenchmarkSweepLost).
const lostStampsSQL = `
	SELECT p.id FROM accounts a
	CROSS JOIN LATERAL (
	    SELECT q.id, q.video_id, q.purchased_at FROM purchases q
	    WHERE q.account_id = a.id AND q.purchased_at >= $1 AND q.livemode AND q.license_revoked_at IS NULL
	    OFFSET 0
	) p
	JOIN videos v ON v.id = p.video_id
	LEFT JOIN LATERAL (
	    SELECT true AS made FROM license_stamps s WHERE s.purchase_id = p.id AND s.source_key = v.media_key LIMIT 1
	) s ON true
	WHERE s.made IS NULL
	ORDER BY p.purchased_at, p.id
	LIMIT $2`

// revokedStampsSQL lists the stamped copies recorded for licence $1 once it
// is revoked (none while it is active).
const revokedStampsSQL = `
	SELECT s.purchase_id, s.media_key, s.stamped_at
	FROM purchases p JOIN license_stamps s ON s.purchase_id = p.id
	WHERE p.license_id = $1 AND p.license_revoked_at IS NOT NULL AND s.media_key IS NOT NULL`

// prunableStampsSQL lists up to $2 stamped copies, oldest first, of
// purchases made before $1 whose copy was also made before $1 (a copy
// remade on demand since is kept for another period).
const prunableStampsSQL = `
	SELECT s.purchase_id, s.media_key, s.stamped_at
	FROM license_stamps s JOIN purchases p ON p.id = s.purchase_id
	WHERE s.stamped_at < $1 AND p.purchased_at < $1 AND s.media_key IS NOT NULL
	ORDER BY s.stamped_at, s.purchase_id
	LIMIT $2`

// forgetStampsSQL deletes the stamps ($1, made at $2) whose copies were
// removed; a stamp remade meanwhile (a newer stamped_at) stays.
const forgetStampsSQL = `
	DELETE FROM license_stamps s USING unnest($1::uuid[], $2::timestamptz[]) AS d(id, at)
	WHERE s.purchase_id = d.id AND s.stamped_at = d.at`
