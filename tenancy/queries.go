package tenancy

// Every statement tenancy sends is here (docs/architecture.md, "Where SQL
// lives"). The key listing (customerKeyRows) adds the conditions a request
// picks to customerKeyRowsSQL, with placeholders only.

// Accounts.

// accountColumns are an accounts row as Account holds it (Account.dest).
const accountColumns = `id, name, source, balance_cents, created_at`

// createAccountSQL inserts an account named $1 with source $2 and a zero
// balance.
const createAccountSQL = `INSERT INTO accounts (name, source) VALUES ($1, $2) RETURNING ` + accountColumns

// accountSQL reads account $1.
const accountSQL = `SELECT ` + accountColumns + ` FROM accounts WHERE id = $1`

// accountExistsSQL says whether account $1 exists.
const accountExistsSQL = `SELECT EXISTS (SELECT 1 FROM accounts WHERE id = $1)`

// legacyAccountSQL reads the account of v0 source $1, if it is a v0
// customer.
const legacyAccountSQL = `SELECT ` + accountColumns + ` FROM accounts WHERE source = $1 AND legacy_enabled`

// setLegacyEnabledSQL marks the account of source $1 as a v0 customer or
// not ($2) and returns it with its switch.
const setLegacyEnabledSQL = `UPDATE accounts SET legacy_enabled = $2 WHERE source = $1
	RETURNING ` + accountColumns + `, legacy_enabled`

// Keys.

// keyColumns are a key row as Key holds it, spending included (see
// broll_key_spending: the purchase statement's own reading of the counters).
const keyColumns = `id, account_id, kind, parent_id, label, scopes, key_prefix,
	rate_limit_per_minute, total_requests, last_used_at, created_at, revoked_at,
	spend_limit_cents, spend_limit_period, settings_version, NOT livemode,
	(SELECT spent FROM broll_key_spending(id, spend_limit_period, created_at)),
	(SELECT period_start FROM broll_key_spending(id, spend_limit_period, created_at)),
	(SELECT resets_at FROM broll_key_spending(id, spend_limit_period, created_at)), licensee_name`

// Key changes write their webhook events (key.created, key.revoked) in the
// statement or transaction that makes the change, so an event exists exactly
// when the change committed. Ops keys belong to no account and have none.

// keyEventData is the data of a key event, built from a row k of api_keys.
const keyEventData = `jsonb_build_object('key', jsonb_build_object(
	'id', k.id, 'kind', k.kind, 'label', k.label, 'prefix', k.key_prefix, 'parent_id', k.parent_id,
	'scopes', k.scopes, 'created_at', k.created_at, 'revoked_at', k.revoked_at))`

// insertKeySQL inserts a key and, for a key of an account, its key.created
// event ($11, with trace id $13, "" for none), in one statement so that the
// event commits with the key even on a pool. $1 account, $2 kind, $3
// parent, $4 label, $5 scopes, $6 hash, $7 prefix, $8-$9 spend limit,
// $10 rate limit, $12 livemode, $14 licensee name (NULL for none).
const insertKeySQL = `
	WITH k AS (
		INSERT INTO api_keys (account_id, kind, parent_id, label, scopes, key_hash, key_prefix,
		                      spend_limit_cents, spend_limit_period, rate_limit_per_minute, livemode, licensee_name)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $12, $14)
		RETURNING *
	), ev AS (
		INSERT INTO webhook_events (account_id, type, livemode, trace_id, data)
		SELECT k.account_id, $11, k.livemode, nullif($13, ''), ` + keyEventData + ` FROM k WHERE k.account_id IS NOT NULL
	)
	SELECT ` + keyColumns + ` FROM k`

// keySQL reads key $1, revoked or not.
const keySQL = `SELECT ` + keyColumns + ` FROM api_keys WHERE id = $1`

// accountKeySQL reads key $1 if it is account $2's.
const accountKeySQL = `SELECT ` + keyColumns + ` FROM api_keys
	WHERE id = $1 AND account_id = $2`

// rootKeyOfAccountSQL reads key $1 if it is a root key of account $2.
const rootKeyOfAccountSQL = `SELECT ` + keyColumns + ` FROM api_keys
	WHERE id = $1 AND account_id = $2 AND kind = 'root'`

// rootKeysSQL lists account $1's root keys with the number of their
// customer keys and of the live ones, live keys first, newest first.
const rootKeysSQL = `
	SELECT ` + keyColumns + `,
	       (SELECT count(*) FROM api_keys c WHERE c.parent_id = r.id),
	       (SELECT count(*) FROM api_keys c WHERE c.parent_id = r.id AND c.revoked_at IS NULL)
	FROM api_keys r
	WHERE r.account_id = $1 AND r.kind = 'root'
	ORDER BY r.revoked_at IS NOT NULL, r.created_at DESC, r.id`

// customerKeyCountSQL counts the customer keys of account $1's root key $2.
const customerKeyCountSQL = `SELECT count(*) FROM api_keys WHERE account_id = $1 AND parent_id = $2`

// customerKeysSQL reads a page of the customer keys of account $1's root
// key $2, live keys first, newest first: $3 limit, $4 offset.
const customerKeysSQL = `SELECT ` + keyColumns + ` FROM api_keys
	WHERE account_id = $1 AND parent_id = $2
	ORDER BY revoked_at IS NOT NULL, created_at DESC, id LIMIT $3 OFFSET $4`

// accountKeysSQL reads up to $2 keys of account $1, root keys first, then
// by label.
const accountKeysSQL = `SELECT ` + keyColumns + ` FROM api_keys WHERE account_id = $1
	ORDER BY kind <> 'root', lower(label), created_at, id LIMIT $2`

// customerKeyRowsSQL reads a page of a root key's customer keys, oldest
// first, and whether the usage batch $3 was applied, in one snapshot.
// where narrows api_keys ($1 account, $2 root key, then the filters' own
// placeholders); order is keyOrder's; limit is a placeholder.
func customerKeyRowsSQL(where, order, limit string) string {
	return `SELECT ` + keyColumns + `,
	EXISTS (SELECT 1 FROM usage_flushes WHERE batch_id = $3)
	FROM api_keys WHERE ` + where + ` ORDER BY ` + order + ` LIMIT ` + limit
}

// updateKeySQL changes customer key $1, of account $2 and root key $3 when
// they are not NULL: $4 label (NULL keeps it), $6-$7 the spend limit when
// $5, $9 the rate limit when $8. Every change bumps settings_version.
const updateKeySQL = `
	UPDATE api_keys SET
		label = coalesce($4, label),
		spend_limit_cents = CASE WHEN $5 THEN $6 ELSE spend_limit_cents END,
		spend_limit_period = CASE WHEN $5 THEN $7 ELSE spend_limit_period END,
		rate_limit_per_minute = CASE WHEN $8 THEN $9 ELSE rate_limit_per_minute END,
		licensee_name = CASE WHEN $10 THEN $11 ELSE licensee_name END,
		settings_version = settings_version + 1
	WHERE id = $1 AND kind = 'customer' AND ($2::uuid IS NULL OR account_id = $2) AND ($3::uuid IS NULL OR parent_id = $3)
	RETURNING ` + keyColumns

// revokeKeySQL revokes key $1, of account $2 and parent $3 when they are
// not NULL; a key revoked before keeps its time.
const revokeKeySQL = `
	UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())
	WHERE id = $1 AND ($2::uuid IS NULL OR account_id = $2) AND ($3::uuid IS NULL OR parent_id = $3)
	RETURNING ` + keyColumns

// revokeCustomerKeysSQL revokes root key $1's customer keys at $2, the
// root's revocation time, and returns their ids.
const revokeCustomerKeysSQL = `
	UPDATE api_keys SET revoked_at = coalesce(revoked_at, $2) WHERE parent_id = $1
	RETURNING id`

// keyRevokedEventsSQL writes key.revoked for the keys of $1 that this
// transaction revoked: revoked_at = now() tells them from keys revoked
// before, which a second revocation leaves alone. $3 is the revoking
// request's trace id ("" for none).
const keyRevokedEventsSQL = `INSERT INTO webhook_events (account_id, type, trace_id, data)
	SELECT k.account_id, $2, nullif($3, ''), ` + keyEventData + `
	FROM api_keys k WHERE k.id = ANY ($1) AND k.revoked_at = now() AND k.account_id IS NOT NULL`

// lookupSQL resolves key hash $1 to its principal, unless the key or its
// root is revoked.
const lookupSQL = `
	SELECT k.id, k.account_id, k.kind, coalesce(k.parent_id, k.id), k.label, k.scopes,
	       coalesce(k.rate_limit_per_minute, 0), k.settings_version, NOT k.livemode
	FROM api_keys k
	LEFT JOIN api_keys p ON p.id = k.parent_id
	WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND p.revoked_at IS NULL`

// Usage counters.

// usageFlushSQL records usage batch $1 as applied; no row inserted: it was
// applied before.
const usageFlushSQL = `INSERT INTO usage_flushes (batch_id) VALUES ($1) ON CONFLICT DO NOTHING`

// applyUsageSQL adds a batch's request counts ($2 per key $1) and last
// uses ($3) to the keys.
const applyUsageSQL = `
	UPDATE api_keys k
	SET total_requests = k.total_requests + u.n,
	    last_used_at = greatest(coalesce(k.last_used_at, u.t), u.t)
	FROM unnest($1::uuid[], $2::bigint[], $3::timestamptz[]) AS u(id, n, t)
	WHERE k.id = u.id`

// applyHourlySQL adds a batch's hourly buckets. Buckets of keys that do not
// exist are dropped rather than failing the batch for ever; the order keeps
// row locks in one order across concurrent flushes.
const applyHourlySQL = `
	INSERT INTO usage_hourly AS h (api_key_id, hour, requests)
	SELECT u.id, u.hour, u.n
	FROM unnest($1::uuid[], $2::timestamptz[], $3::bigint[]) AS u(id, hour, n)
	WHERE EXISTS (SELECT 1 FROM api_keys k WHERE k.id = u.id)
	ORDER BY u.id, u.hour
	ON CONFLICT (api_key_id, hour) DO UPDATE SET requests = h.requests + excluded.requests`

// requestsByHourSQL counts the requests of account $1's keys in every hour
// from $2 to $3, filling quiet hours with zero so that a chart shows them
// rather than leaving them out.
const requestsByHourSQL = `
	SELECT g.hour, coalesce(sum(h.requests), 0)::bigint
	FROM generate_series($2::timestamptz, $3::timestamptz, interval '1 hour') AS g(hour)
	LEFT JOIN usage_hourly h ON h.hour = g.hour
	     AND h.api_key_id IN (SELECT id FROM api_keys WHERE account_id = $1)
	GROUP BY g.hour ORDER BY g.hour`

// Dashboard users and their set-password links.

// userColumns are a dashboard_users row as User holds it, by name.
const userColumns = `id, account_id, email, password_hash IS NOT NULL AS password_set, password_set_at,
	last_sign_in_at, created_at`

// createUserSQL adds user $2 to account $1 at $3; no row: no such account.
const createUserSQL = `
	INSERT INTO dashboard_users (account_id, email, created_at)
	SELECT id, $2, $3 FROM accounts WHERE id = $1
	RETURNING ` + userColumns

// resetUserSQL clears the password of the user with email $1.
const resetUserSQL = `
	UPDATE dashboard_users SET password_hash = NULL, password_set_at = NULL WHERE email = $1
	RETURNING ` + userColumns

// usersSQL lists account $1's users, oldest first.
const usersSQL = `SELECT ` + userColumns + ` FROM dashboard_users
	WHERE account_id = $1 ORDER BY created_at, id`

// credentialsSQL reads the user with email $1 and its password hash.
const credentialsSQL = `SELECT ` + userColumns + `, password_hash FROM dashboard_users WHERE email = $1`

// passwordIsSQL reports whether user $1's password hash is still $2.
const passwordIsSQL = `SELECT password_hash IS NOT DISTINCT FROM $2 FROM dashboard_users WHERE id = $1`

// recordSignInSQL notes user $1's sign-in at $2.
const recordSignInSQL = `UPDATE dashboard_users SET last_sign_in_at = $2 WHERE id = $1`

// setPasswordSQL sets user $1's password hash to $2, at $3.
const setPasswordSQL = `UPDATE dashboard_users SET password_hash = $2, password_set_at = $3
	WHERE id = $1 RETURNING ` + userColumns

// retireLinksSQL ends user $1's unused set-password links at $2.
const retireLinksSQL = `UPDATE dashboard_password_tokens SET used_at = $2
	WHERE user_id = $1 AND used_at IS NULL`

// insertLinkSQL stores a set-password link: $1 token hash, $2 user, $3
// created, $4 expires.
const insertLinkSQL = `INSERT INTO dashboard_password_tokens (token_hash, user_id, created_at, expires_at)
	VALUES ($1, $2, $3, $4)`

// linkUserSQL reads the user of the link with token hash $1, while it is
// unused and unexpired at $2.
const linkUserSQL = `SELECT u.id, u.account_id, u.email, u.password_hash IS NOT NULL AS password_set,
	u.password_set_at, u.last_sign_in_at, u.created_at
	FROM dashboard_password_tokens t JOIN dashboard_users u ON u.id = t.user_id
	WHERE t.token_hash = $1 AND t.used_at IS NULL AND t.expires_at > $2`

// spendLinkSQL uses the link with token hash $1 at $2, if it is unused and
// unexpired, and returns its user.
const spendLinkSQL = `UPDATE dashboard_password_tokens SET used_at = $2
	WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2
	RETURNING user_id`
