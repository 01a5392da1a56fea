package billing

// legacyPurchaseSQL is the v0 purchase: the v1 statement's guarantees for a
// buyer that has no key. The same guard (broll_purchase_check, BR404 for
// unknown or retired videos) aborts everything, and the same CHECK
// (accounts_balance_not_negative) refuses an overdraft, after which nothing
// is inserted or charged. What differs is the owner of a purchase: v0 rows
// have no api_key_id, carry legacy/source/customer_email, and are
// deduplicated by the partial unique index purchases_legacy_unique on
// (account, customer email or empty, video), which also makes a concurrent
// duplicate a no-op instead of a second charge. The charge runs last, so
// the account row lock is held only from the charge to the commit.
//
// $1 account, $2 source, $3 customer email (” when none), $4 video ids.
const legacyPurchaseSQL = `
WITH req AS (
    SELECT DISTINCT unnest($4::uuid[]) AS video_id
), owned AS (
    SELECT p.id, p.video_id, p.price_cents, p.purchased_at
    FROM purchases p
    WHERE p.legacy AND p.account_id = $1 AND coalesce(p.customer_email, '') = $3
      AND p.video_id IN (SELECT video_id FROM req)
), priced AS (
    SELECT v.id, t.price_cents, v.difficulty
    FROM videos v JOIN tiers t ON t.name = v.difficulty
    WHERE v.id IN (SELECT video_id FROM req) AND v.retired_at IS NULL
      AND v.id NOT IN (SELECT video_id FROM owned)
), checks AS (
    SELECT broll_purchase_check(
        (SELECT count(*) FROM req) - (SELECT count(*) FROM owned) - (SELECT count(*) FROM priced),
        (SELECT coalesce(sum(price_cents), 0) FROM priced)::bigint,
        NULL::bigint) AS quote
), ins AS (
    INSERT INTO purchases (account_id, api_key_id, video_id, price_cents, tier, legacy, source, customer_email)
    SELECT $1, NULL, p.id, p.price_cents, p.difficulty, true, $2, nullif($3, '')
    FROM priced p, checks
    ORDER BY p.id
    ON CONFLICT (account_id, coalesce(customer_email, ''), video_id) WHERE legacy DO NOTHING
    RETURNING id, video_id, price_cents, purchased_at
), led AS (
    INSERT INTO ledger (account_id, amount_cents, kind, purchase_id, note)
    SELECT $1, -price_cents, 'purchase', id, 'legacy v0' FROM ins WHERE price_cents > 0
), charge AS (
    UPDATE accounts SET balance_cents = balance_cents - (SELECT sum(price_cents) FROM ins)
    WHERE id = $1 AND EXISTS (SELECT 1 FROM ins WHERE price_cents > 0)
    RETURNING balance_cents
)
SELECT c.quote, (SELECT balance_cents FROM charge), r.id, r.video_id, r.price_cents, r.purchased_at, r.owned
FROM checks c
LEFT JOIN (
    SELECT id, video_id, price_cents, purchased_at, false AS owned FROM ins
    UNION ALL
    SELECT id, video_id, price_cents, purchased_at, true FROM owned
) r ON true`

// legacyOwnedSQL finds what a legacy buyer already holds. The coalesce
// matches the expression of purchases_legacy_unique, so the index serves it.
// $1 account, $2 customer email (” when none), $3 video ids.
const legacyOwnedSQL = `
	SELECT id, video_id, price_cents, purchased_at FROM purchases
	WHERE legacy AND account_id = $1 AND coalesce(customer_email, '') = $2 AND video_id = ANY($3)`

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
