package webhook_test

import (
	"context"
	"log/slog"
	"testing"

	"broll/internal/database"
	"broll/internal/testkit"
)

// A database of the release before revocation ended endpoints (schema
// version 25) holds an endpoint of a revoked root key, still enabled with
// its secret and a pending delivery: migrating ends it as a revocation now
// does, and leaves a live root key's endpoint alone.
func TestMigrateEndsEndpointsOfRootKeysRevokedBefore(t *testing.T) {
	t.Parallel()
	url, db := testkit.DatabaseAt(t, 25)
	ctx := context.Background()
	var revokedEp, liveEp string
	err := db.QueryRowContext(ctx, `
		WITH a AS (INSERT INTO accounts (name, source) VALUES ('Before Co', 'before-co') RETURNING id),
		k AS (INSERT INTO api_keys (account_id, kind, scopes, key_hash, key_prefix, revoked_at)
		      SELECT a.id, 'root', '{webhooks:manage}', decode(v.h, 'hex'), 'dsk_' || v.h, v.r
		      FROM a, (VALUES ('01', now()), ('02', NULL)) AS v(h, r) RETURNING id, revoked_at),
		e AS (INSERT INTO webhook_endpoints (account_id, root_key_id, url, events)
		      SELECT a.id, k.id, 'https://hooks.example.com/' || (k.revoked_at IS NULL), '{balance.low}' FROM a, k
		      RETURNING id, url),
		s AS (INSERT INTO webhook_secrets (endpoint_id, secret) SELECT id, 'whsec_c2VjcmV0' FROM e)
		SELECT (SELECT id::text FROM e WHERE url LIKE '%false'), (SELECT id::text FROM e WHERE url LIKE '%true')`).
		Scan(&revokedEp, &liveEp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO webhook_events (account_id, type)
		SELECT account_id, 'balance.low' FROM webhook_endpoints LIMIT 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := database.Migrate(ctx, url, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	type state struct {
		enabled          bool
		reason           string
		secrets, pending int
	}
	read := func(id string) state {
		t.Helper()
		var s state
		if err := db.QueryRowContext(ctx, `SELECT enabled, disabled_reason,
			(SELECT count(*) FROM webhook_secrets WHERE endpoint_id = e.id),
			(SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = e.id AND state = 'pending')
			FROM webhook_endpoints e WHERE id = $1`, id).Scan(&s.enabled, &s.reason, &s.secrets, &s.pending); err != nil {
			t.Fatal(err)
		}
		return s
	}
	if got := read(revokedEp); got != (state{false, "disabled: its root key was revoked", 0, 0}) {
		t.Fatalf("the revoked root key's endpoint after migrating: %+v", got)
	}
	if got := read(liveEp); got != (state{true, "", 1, 1}) {
		t.Fatalf("the live root key's endpoint after migrating: %+v", got)
	}
}
