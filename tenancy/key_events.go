package tenancy

// Key changes write their webhook events (key.created, key.revoked) in the
// statement or transaction that makes the change, so an event exists exactly
// when the change committed. Ops keys belong to no account and have none.

// keyEventData is the data of a key event, built from a row k of api_keys.
const keyEventData = `jsonb_build_object('key', jsonb_build_object(
	'id', k.id, 'kind', k.kind, 'label', k.label, 'prefix', k.key_prefix, 'parent_id', k.parent_id,
	'scopes', k.scopes, 'created_at', k.created_at, 'revoked_at', k.revoked_at))`

// keyRevokedEventsSQL writes key.revoked for the keys of $1 that this
// transaction revoked: revoked_at = now() tells them from keys revoked
// before, which a second revocation leaves alone. $3 is the revoking
// request's trace id ("" for none).
const keyRevokedEventsSQL = `INSERT INTO webhook_events (account_id, type, trace_id, data)
	SELECT k.account_id, $2, nullif($3, ''), ` + keyEventData + `
	FROM api_keys k WHERE k.id = ANY ($1) AND k.revoked_at = now() AND k.account_id IS NOT NULL`
