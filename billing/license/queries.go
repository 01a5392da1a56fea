package license

import "broll/internal/outbox"

// Every statement the licence package sends is here (docs/architecture.md,
// "Where SQL lives").

// licenseColumns are what a licence document is made of: the purchase p,
// its clip v, its account a and its key k (NULL for a legacy purchase), in
// licenseRow's order.
const licenseColumns = `p.license_id, p.livemode, p.license_revoked_at, p.license_revoked_reason,
	v.id, v.title, k.licensee_name, a.name, p.purchased_at, p.price_cents, p.id,
	p.account_id, p.api_key_id, k.parent_id, p.legacy`

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
