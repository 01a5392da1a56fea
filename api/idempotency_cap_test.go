package api

import (
	"context"
	"testing"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
)

// TestIdempotentAnswerNotKept: when the first answer to an Idempotency-Key
// was not kept (over idempotency.MaxBody, or dropped by migration 00017),
// a retry is not run again: it gets 409 conflict naming the first
// request's status, marked replayed, and no second key is made.
func TestIdempotentAnswerNotKept(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	ctx := context.Background()
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	header := map[string]string{"Authorization": "Bearer " + acct.RootKey.Secret, "Idempotency-Key": "not-kept"}
	body := map[string]any{"customer_label": "kept once"}
	expect[brollclient.KeyCreated](t, e.send(t, 0, "POST", "/api/v1/keys", header, body), 201)
	if _, err := e.pool.Exec(ctx, `UPDATE idempotency_keys SET body = NULL WHERE idem_key = 'not-kept'`); err != nil {
		t.Fatal(err)
	}
	r := e.send(t, 0, "POST", "/api/v1/keys", header, body)
	p := problemOf(t, r)
	if r.status != 409 || p.Code != "conflict" || r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry of an answer not kept: %d %v %s", r.status, r.header, r.raw)
	}
	if deref(p.OriginalStatus) != 201 {
		t.Errorf("original_status missing: %s", r.raw)
	}
	var made int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM api_keys WHERE label = 'kept once'`).Scan(&made); err != nil || made != 1 {
		t.Fatalf("%d keys made (%v), want 1", made, err)
	}
}
