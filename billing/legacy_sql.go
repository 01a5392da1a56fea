package billing

// legacyListWhere selects an account's legacy purchases, optionally of one
// customer email and within [start, end). NULL parameters mean "any".
// $1 account, $2 email, $3 start, $4 end (exclusive).
const legacyListWhere = `
	FROM purchases p JOIN videos v ON v.id = p.video_id
	WHERE p.account_id = $1 AND p.legacy
	  AND ($2::text IS NULL OR p.customer_email = $2)
	  AND ($3::timestamptz IS NULL OR p.purchased_at >= $3)
	  AND ($4::timestamptz IS NULL OR p.purchased_at < $4)`

const legacyListSummarySQL = `SELECT count(*), coalesce(sum(p.price_cents), 0)` + legacyListWhere

// $5 limit, $6 offset.
const legacyListPageSQL = `
	SELECT p.id, p.video_id, p.price_cents, p.purchased_at, p.customer_email,
	       v.title, v.emotion, v.gender, v.difficulty, v.media_type, v.duration_seconds, v.retired_at IS NOT NULL` +
	legacyListWhere + `
	ORDER BY p.purchased_at DESC, p.id
	LIMIT $5 OFFSET $6`

// legacyCustomerEmailsSQL lists the distinct customers of an account's
// legacy purchases, the ones a migration gives a customer key each.
const legacyCustomerEmailsSQL = `
	SELECT DISTINCT customer_email FROM purchases
	WHERE account_id = $1 AND legacy AND customer_email IS NOT NULL
	ORDER BY customer_email`

// legacyRootKeySQL picks the root key that new customer keys hang under:
// the account's oldest live one.
const legacyRootKeySQL = `
	SELECT id FROM api_keys
	WHERE account_id = $1 AND kind = 'root' AND revoked_at IS NULL
	ORDER BY created_at, id LIMIT 1`

// legacyLabelledKeysSQL finds the customer keys already labelled with the
// given emails, a live key first when a label has several.
const legacyLabelledKeysSQL = `
	SELECT DISTINCT ON (label) label, id, revoked_at IS NOT NULL
	FROM api_keys
	WHERE account_id = $1 AND kind = 'customer' AND label = ANY($2)
	ORDER BY label, revoked_at IS NOT NULL, created_at, id`

// legacyMigrateLockSQL serialises migrations of one account, so that two
// operators running the helper at once cannot give one email two keys.
const legacyMigrateLockSQL = `SELECT pg_advisory_lock(hashtextextended('broll:legacy-migrate:' || $1::text, 0))`

const legacyMigrateUnlockSQL = `SELECT pg_advisory_unlock(hashtextextended('broll:legacy-migrate:' || $1::text, 0))`
