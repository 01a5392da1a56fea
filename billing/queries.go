package billing

import "broll/internal/outbox"

// Every statement billing sends is here (docs/architecture.md, "Where SQL
// lives"). The rules of a purchase are not: they are the SQL function
// broll_purchase_batch (migrations/functions/purchase_batch.sql), which
// purchaseBatchSQL calls. Statements whose WHERE depends on the request
// (listings, their export, the month to date, the daily spend) take the
// conditions visibleTo and ListQuery.filter build, with placeholders only.

// Accounts and the live pool.

// topUpSQL adds $2 cents to account $1's pool and returns the new balance.
const topUpSQL = `
	UPDATE accounts SET balance_cents = balance_cents + $2 WHERE id = $1
	RETURNING balance_cents`

// topUpLedgerSQL records a top-up of $2 cents to account $1, with note $3.
const topUpLedgerSQL = `
	INSERT INTO ledger (account_id, amount_cents, kind, note) VALUES ($1, $2, 'topup', $3)`

// balanceSQL reads account $1's live pool; no row: no such account.
const balanceSQL = `SELECT balance_cents FROM accounts WHERE id = $1`

// setLowBalanceSQL sets account $1's balance.low threshold ($2, NULL for
// the default).
const setLowBalanceSQL = `UPDATE accounts SET low_balance_cents = $2 WHERE id = $1`

// Purchases.

// beginSQL, commitSQL and rollbackSQL frame a purchase batch whose commit
// waits for its hold (batcher.exec).
const (
	beginSQL    = `BEGIN`
	commitSQL   = `COMMIT`
	rollbackSQL = `ROLLBACK`
)

// purchaseBatchSQL runs one batch of purchases of account $1 through the
// purchase function: $2-$5 per job (key, legacy email, expected total, dry
// run), $6-$8 per line (job, video, purchase id if bought), $9 livemode,
// $10 the test balance's start, $11 per line the licence id if bought.
// One row per line, in batchLine's order.
const purchaseBatchSQL = `SELECT r_job, r_verdict, r_quote, r_available, r_balance, r_video_id, r_known,
	r_purchase_id, r_price_cents, r_purchased_at, r_limit, r_period, r_spent, r_resets_at,
	r_license_id, r_license_revoked
	FROM broll_purchase_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`

// purchaseEventsSQL writes the outbox rows of a purchase batch through
// broll_purchase_events (migrations/functions/purchase_events.sql, which
// says which events and when). It runs after the batch statement in the
// same implicit transaction (one pipeline, one Sync), so the events commit
// with the purchases or not at all.
//
// $1 account, $2 event id per line, $3 purchase id per line, $4 the
// balance.low event id (empty when nothing was bought), $5 the default
// threshold in cents, $6 livemode, $7 the trace id per line ("" for none).
const purchaseEventsSQL = `SELECT broll_purchase_events($1, $2, $3, $4, $5, $6, $7)`

// spendLimitEventsSQL writes spend_limit.reached for the keys a batch
// refused for their spend limit: at most one per key and period (the id is
// made from both, so a second refusal in the period, or a batch run again,
// inserts nothing), and none when no enabled endpoint of the account
// subscribes to it. A test key's event says livemode false.
//
// $1 account, then per refused key: $2 event id, $3 key, $4 limit, $5 spent,
// $6 period, $7 the end of the period (NULL for 'total'), $8 the trace id of
// the refused request ("" for none).
const spendLimitEventsSQL = `
INSERT INTO webhook_events (id, account_id, type, livemode, trace_id, data)
SELECT l.event_id, $1, '` + outbox.SpendLimitReached + `', k.livemode, nullif(l.trace_id, ''), jsonb_build_object(
    'key', jsonb_build_object('id', k.id, 'kind', k.kind, 'label', k.label),
    'limit', round(l.lim / 100.0, 2), 'spent', round(l.spent / 100.0, 2),
    'period', l.period, 'period_resets_at', l.resets_at, 'currency', 'USD')
FROM unnest($2::text[], $3::uuid[], $4::bigint[], $5::bigint[], $6::text[], $7::timestamptz[], $8::text[])
     AS l(event_id, key_id, lim, spent, period, resets_at, trace_id)
JOIN api_keys k ON k.id = l.key_id AND k.account_id = $1
WHERE EXISTS (SELECT 1 FROM webhook_endpoints e
              WHERE e.account_id = $1 AND e.enabled AND '` + outbox.SpendLimitReached + `' = ANY (e.events))
ON CONFLICT (id) DO NOTHING`

// The test balance.

// testBalanceSQL reads account $1's test balance, or $2 (what it starts
// with) before the first test purchase made its row; no row: no account.
const testBalanceSQL = `
	SELECT coalesce((SELECT t.balance_cents FROM test_balances t WHERE t.account_id = a.id), $2)
	FROM accounts a WHERE a.id = $1`

// testBalanceOpenSQL makes account $1's test balance row, starting at $2,
// unless it exists (migrations/functions/test_balance.sql).
const testBalanceOpenSQL = `SELECT broll_test_balance_open($1, $2)`

// testBalanceLockSQL reads account $1's test balance and locks its row,
// which orders a reset with the test purchases in flight.
const testBalanceLockSQL = `SELECT balance_cents FROM test_balances WHERE account_id = $1 FOR UPDATE`

// testBalanceSetSQL sets account $1's test balance to $2.
const testBalanceSetSQL = `UPDATE test_balances SET balance_cents = $2 WHERE account_id = $1`

// testBalanceResetLedgerSQL records a reset that moved account $1's test
// balance by $2, in the test ledger.
const testBalanceResetLedgerSQL = `INSERT INTO ledger (account_id, amount_cents, kind, note, livemode)
	VALUES ($1, $2, 'adjustment', 'test balance reset', false)`

// Downloads.

// keyJoinSQL joins a purchase p to its key k and that key's root r (both
// NULL for a legacy purchase), for keyRevokedSQL and the key's label.
const keyJoinSQL = `LEFT JOIN api_keys k ON k.id = p.api_key_id LEFT JOIN api_keys r ON r.id = k.parent_id`

// keyRevokedSQL says whether a purchase's key, or its key's root, is
// revoked: its download links stop working (Verify) and listings show it
// without one.
const keyRevokedSQL = `(k.revoked_at IS NOT NULL OR r.revoked_at IS NOT NULL)`

// authorizeSQL reads what a link of purchase $1 fetches, and refuses
// purchases whose key, or whose key's root, is revoked: a revoked key's
// links stop working with it.
// With them the stamp recorded for the purchase (license_stamps) when it
// was made from the clip's current file: the stamped copy's key ("" for
// none) and whether one is recorded at all (a container that cannot carry
// the licence has a record and no copy); and the purchase's licence, with
// whether it was revoked (the link is then refused, license_revoked).
const authorizeSQL = `
	SELECT p.id, p.account_id, p.api_key_id, v.id, v.title, v.media_key, v.media_content_type,
	       p.livemode, v.preview_key, coalesce(s.media_key, ''), s.purchase_id IS NOT NULL,
	       p.license_id, p.license_revoked_at IS NOT NULL
	FROM purchases p
	JOIN videos v ON v.id = p.video_id
	LEFT JOIN license_stamps s ON s.purchase_id = p.id AND s.source_key = v.media_key
	` + keyJoinSQL + `
	WHERE p.id = $1 AND NOT ` + keyRevokedSQL

// licenseRevokedSQL says whether purchase $1's licence was revoked.
const licenseRevokedSQL = `SELECT license_revoked_at IS NOT NULL FROM purchases WHERE id = $1`

// logDownloadSQL records a fetch as it starts: $1 purchase, $2 account,
// $3 key, $4 client address, $5 user agent, $6 bytes to send, $7 status.
const logDownloadSQL = `
	INSERT INTO download_log (purchase_id, account_id, api_key_id, client_addr, user_agent, bytes_sent, status)
	VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`

// finishDownloadSQL records that $2 bytes of logged fetch $1 went out.
const finishDownloadSQL = `UPDATE download_log SET bytes_delivered = $2 WHERE id = $1`

// auditSQL lists the live purchases fetched since $1 from more than $2
// distinct client addresses, most addresses first, in the fields of
// SuspectPurchase.
const auditSQL = `
	SELECT d.purchase_id, p.account_id, p.api_key_id, coalesce(k.label, ''), p.video_id,
	       count(DISTINCT d.client_addr), count(*), min(d.downloaded_at), max(d.downloaded_at)
	FROM download_log d
	JOIN purchases p ON p.id = d.purchase_id
	LEFT JOIN api_keys k ON k.id = p.api_key_id
	-- A test purchase's link serves a preview: nothing to redistribute.
	WHERE d.downloaded_at >= $1 AND p.livemode
	GROUP BY d.purchase_id, p.account_id, p.api_key_id, k.label, p.video_id
	HAVING count(DISTINCT d.client_addr) > $2
	ORDER BY count(DISTINCT d.client_addr) DESC, d.purchase_id`

// Statements and the ledger.

// statementKeysSQL sums account $1's live purchases in [$2, $3) per key
// (legacy ones as one line), largest first, in the fields of StatementLine.
const statementKeysSQL = `
	SELECT p.api_key_id, CASE WHEN p.legacy THEN 'legacy' ELSE coalesce(k.label, '') END,
	       CASE WHEN p.legacy THEN 'legacy' ELSE k.kind END, count(*), sum(p.price_cents)
	FROM purchases p LEFT JOIN api_keys k ON k.id = p.api_key_id
	WHERE p.account_id = $1 AND p.livemode AND p.purchased_at >= $2 AND p.purchased_at < $3
	GROUP BY 1, 2, 3 ORDER BY sum(p.price_cents) DESC, 2`

// statementLedgerChargesSQL sums the live ledger's charges for account
// $1's purchases made in [$2, $3).
const statementLedgerChargesSQL = `
	SELECT coalesce(-sum(l.amount_cents), 0) FROM ledger l JOIN purchases p ON p.id = l.purchase_id
	WHERE l.account_id = $1 AND l.livemode AND l.kind = 'purchase' AND p.purchased_at >= $2 AND p.purchased_at < $3`

// ledgerPageSQL reads one page with the running balance. The ledger sums to
// the pool at every commit, so the balance after an entry is the pool now
// minus every newer entry: the entries of the pages before this one ($3
// newest) and those above it on this page. That costs the rows up to the
// page, not a pass over the whole ledger, and the one statement reads the
// pool and the entries in one snapshot. $4 picks the live ledger and pool
// or the test ones (the test balance's own row), which sum alike.
const ledgerPageSQL = `
	WITH newer AS (
		SELECT coalesce(sum(amount_cents), 0) AS amount FROM (
			SELECT amount_cents FROM ledger WHERE account_id = $1 AND livemode = $4
			ORDER BY created_at DESC, id DESC LIMIT $3) x
	), page AS (
		SELECT l.id, l.created_at, l.kind, l.amount_cents, l.note, l.purchase_id, l.api_key_id
		FROM ledger l WHERE l.account_id = $1 AND l.livemode = $4
		ORDER BY l.created_at DESC, l.id DESC LIMIT $2 OFFSET $3
	), pool AS (
		SELECT balance_cents FROM accounts WHERE id = $1 AND $4
		UNION ALL
		SELECT coalesce((SELECT balance_cents FROM test_balances WHERE account_id = $1), 0) WHERE NOT $4
	)
	SELECT pg.id, pg.created_at, pg.kind, pg.amount_cents,
	       a.balance_cents - n.amount - coalesce(sum(pg.amount_cents) OVER (
	           ORDER BY pg.created_at DESC, pg.id DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0),
	       pg.note, pg.purchase_id, pg.api_key_id, coalesce(k.label, ''), coalesce(v.title, ''),
	       (SELECT count(*) FROM ledger WHERE account_id = $1 AND livemode = $4)
	FROM page pg
	CROSS JOIN newer n
	CROSS JOIN pool a
	LEFT JOIN api_keys k ON k.id = pg.api_key_id
	LEFT JOIN purchases p ON p.id = pg.purchase_id
	LEFT JOIN videos v ON v.id = p.video_id
	ORDER BY pg.created_at DESC, pg.id DESC`

// ledgerCountSQL counts account $1's ledger entries, live ($2) or test.
const ledgerCountSQL = `SELECT count(*) FROM ledger WHERE account_id = $1 AND livemode = $2`

// Purchase listings. Their conditions come from visibleTo and
// ListQuery.filter (a paging.Builder), which number the placeholders.

// purchaseFromSQL is the FROM of a listing: a purchase p, its video v, its
// key k and the key's root r (keyJoinSQL), narrowed by where.
func purchaseFromSQL(where string) string {
	return ` FROM purchases p JOIN videos v ON v.id = p.video_id ` + keyJoinSQL + ` WHERE ` + where
}

// recordColumns are the columns scanRecord reads, after the similarity.
const recordColumns = `p.id, p.video_id, p.api_key_id, coalesce(k.label, ''), p.price_cents, p.purchased_at, p.legacy,
	p.customer_email, v.title, v.emotion, v.gender, v.difficulty, v.media_type, v.duration_seconds,
	v.retired_at IS NOT NULL, ` + keyRevokedSQL + `, p.livemode, p.license_id, p.license_revoked_at IS NOT NULL`

// listSummarySQL counts and sums the purchases of from.
func listSummarySQL(from string) string {
	return `SELECT count(*), coalesce(sum(p.price_cents), 0)` + from
}

// listPageSQL reads a page of the purchases of from: similarity (an
// expression, NULL without semantic search) then recordColumns, in order,
// limit and offset being placeholders.
func listPageSQL(similarity, from, order, limit, offset string) string {
	return `SELECT ` + similarity + ` AS similarity, ` + recordColumns + from + ` ORDER BY ` + order +
		` LIMIT ` + limit + ` OFFSET ` + offset
}

// exportSQL reads every purchase of from, oldest first, as recordColumns.
func exportSQL(from string) string {
	return `SELECT ` + recordColumns + from + ` ORDER BY p.purchased_at, p.id`
}

// liveBalanceSQL is summarySQL's balance for a live principal: the pool.
const liveBalanceSQL = `a.balance_cents`

// testBalanceOrSQL is summarySQL's balance for a test principal: the test
// balance, or start (a placeholder) before its row exists.
func testBalanceOrSQL(start string) string {
	return `coalesce((SELECT t.balance_cents FROM test_balances t WHERE t.account_id = a.id), ` + start + `)`
}

// summarySQL reads an account a's balance (liveBalanceSQL or
// testBalanceOrSQL) with the count and sum of the purchases p of where
// (the principal's, this month); account is the account's placeholder.
func summarySQL(balance, where, account string) string {
	return `
	SELECT ` + balance + `, m.n, m.amount
	FROM accounts a,
	     (SELECT count(*) AS n, coalesce(sum(p.price_cents), 0)::bigint AS amount
	      FROM purchases p WHERE ` + where + `) m
	WHERE a.id = ` + account
}

// dailySpendSQL fills every day of the window, quiet days as zero, over the
// purchases of where (visibleTo): first and last are the placeholders of
// the first and last day. Days are 24 hours from UTC midnight whatever the
// session's time zone.
func dailySpendSQL(where, first, last string) string {
	return `
	SELECT g.day, count(p.id), coalesce(sum(p.price_cents), 0)::bigint
	FROM generate_series(` + first + `::timestamptz, ` + last + `::timestamptz, interval '24 hours') AS g(day)
	LEFT JOIN purchases p ON ` + where + `
	     AND p.purchased_at >= g.day AND p.purchased_at < g.day + interval '24 hours'
	GROUP BY g.day ORDER BY g.day`
}

// ownKeyOfAccountSQL says whether key $1 belongs to account $2: what the
// account owner may filter a listing by.
const ownKeyOfAccountSQL = `SELECT EXISTS (SELECT 1 FROM api_keys WHERE id = $1 AND account_id = $2)`

// ownKeyOfRootSQL says whether key $1 of account $2 is root key $3 or one
// of its customer keys: what a root key may filter a listing by.
const ownKeyOfRootSQL = `SELECT EXISTS (SELECT 1 FROM api_keys
	WHERE id = $1 AND account_id = $2 AND id IN (SELECT f.id FROM broll_key_family($3) f(id)))`

// Legacy (v0) purchases.

// legacyListWhere selects an account's legacy purchases, optionally of one
// customer email and within [start, end). NULL parameters mean "any".
// $1 account, $2 email, $3 start, $4 end (exclusive).
const legacyListWhere = `
	FROM purchases p JOIN videos v ON v.id = p.video_id
	WHERE p.account_id = $1 AND p.legacy
	  AND ($2::text IS NULL OR p.customer_email = $2)
	  AND ($3::timestamptz IS NULL OR p.purchased_at >= $3)
	  AND ($4::timestamptz IS NULL OR p.purchased_at < $4)`

// legacyListSummarySQL counts and sums the legacy purchases of
// legacyListWhere.
const legacyListSummarySQL = `SELECT count(*), coalesce(sum(p.price_cents), 0)` + legacyListWhere

// legacyListPageSQL reads a page of them, newest first: $5 limit, $6 offset.
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

// legacyLabelledKeysSQL finds the customer keys of account $1 already
// labelled with the emails $2, a live key first when a label has several,
// in the fields of LegacyCustomerKey.
const legacyLabelledKeysSQL = `
	SELECT DISTINCT ON (label) label AS email, id AS key_id, revoked_at IS NOT NULL AS revoked
	FROM api_keys
	WHERE account_id = $1 AND kind = 'customer' AND label = ANY($2)
	ORDER BY label, revoked_at IS NOT NULL, created_at, id`

// legacyMigrateLockSQL serialises migrations of one account, so that two
// operators running the helper at once cannot give one email two keys.
const legacyMigrateLockSQL = `SELECT pg_advisory_lock(hashtextextended('broll:legacy-migrate:' || $1::text, 0))`

// legacyMigrateUnlockSQL lets legacyMigrateLockSQL's lock go.
const legacyMigrateUnlockSQL = `SELECT pg_advisory_unlock(hashtextextended('broll:legacy-migrate:' || $1::text, 0))`
