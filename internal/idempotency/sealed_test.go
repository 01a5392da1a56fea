package idempotency_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"broll/billing/billingtest"
	"broll/internal/config"
	"broll/internal/idempotency"
	"broll/internal/seal"
	"broll/internal/testkit"
	"broll/migrations"
	"broll/wiring"
)

func testSealer(t *testing.T) *seal.Sealer {
	t.Helper()
	s, err := wiring.NewSealer(config.Config{SigningKey: config.Secret(config.GenerateSecret())})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAnswersKeptSealed: the body column never holds the answer in
// plaintext, a replay opens it, and a sealed answer moved to another row
// does not open there.
func TestAnswersKeptSealed(t *testing.T) {
	t.Parallel()
	pool, _ := testkit.NewPool(t)
	ctx := context.Background()
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{})
	key := acct.Root.KeyID
	s := idempotency.New(pool, testSealer(t), idempotency.StoreOptions{Stale: time.Minute})
	h := idempotency.Hash("POST", "/api/v1/keys", []byte(`{}`))
	answer := []byte(`{"api_key":"dsk_0123456789abcdefghijklmnopqrstuvwxyzABCDEF"}`)

	for _, k := range []string{"a", "b"} {
		claim, _, err := s.Begin(ctx, key, k, h)
		if err != nil || claim == nil {
			t.Fatalf("claim %s: %v", k, err)
		}
		if err := claim.Finish(ctx, idempotency.Response{Status: 201, ContentType: "application/json", Body: answer}); err != nil {
			t.Fatal(err)
		}
	}
	var body []byte
	if err := pool.QueryRow(ctx, `SELECT body FROM idempotency_keys WHERE idem_key = 'a'`).Scan(&body); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(body, []byte("dsk_")) || !seal.IsSealed(string(body)) {
		t.Fatalf("kept body %q", body)
	}
	_, stored, err := s.Begin(ctx, key, "a", h)
	if err != nil || stored == nil || !stored.Kept || stored.Status != 201 || !bytes.Equal(stored.Body, answer) {
		t.Fatalf("replay: %+v %v", stored, err)
	}
	// b's sealed answer copied into a's row is bound to b: it opens nowhere else.
	if _, err := pool.Exec(ctx, `UPDATE idempotency_keys SET body = (SELECT body FROM idempotency_keys WHERE idem_key = 'b')
		WHERE idem_key = 'a'`); err != nil {
		t.Fatal(err)
	}
	if _, stored, err := s.Begin(ctx, key, "a", h); err != nil || stored == nil || stored.Kept || stored.Body != nil {
		t.Fatalf("a moved answer opened: %+v %v", stored, err)
	}
}

// TestAnswerOverCapNotKept: an answer over MaxBody keeps its status only:
// the row stays small, a retry is not run again, and it is told the answer
// is not kept. An answer at the cap is kept whole.
func TestAnswerOverCapNotKept(t *testing.T) {
	t.Parallel()
	pool, _ := testkit.NewPool(t)
	ctx := context.Background()
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{})
	key := acct.Root.KeyID
	s := idempotency.New(pool, testSealer(t), idempotency.StoreOptions{Stale: time.Minute})
	for _, c := range []struct {
		idem string
		size int
		kept bool
	}{{"at-cap", idempotency.MaxBody, true}, {"over-cap", idempotency.MaxBody + 1, false}, {"huge", 2 << 20, false}} {
		h := idempotency.Hash("POST", "/x", []byte(c.idem))
		claim, _, err := s.Begin(ctx, key, c.idem, h)
		if err != nil || claim == nil {
			t.Fatalf("%s: %v", c.idem, err)
		}
		answer := bytes.Repeat([]byte("x"), c.size)
		if err := claim.Finish(ctx, idempotency.Response{Status: 400, ContentType: "application/problem+json", Body: answer}); err != nil {
			t.Fatal(err)
		}
		var rowBytes int
		if err := pool.QueryRow(ctx, `SELECT coalesce(octet_length(body), 0) FROM idempotency_keys WHERE idem_key = $1`, c.idem).Scan(&rowBytes); err != nil {
			t.Fatal(err)
		}
		if rowBytes > idempotency.MaxBody*3/2 {
			t.Errorf("%s: the row keeps %d bytes", c.idem, rowBytes)
		}
		claim2, stored, err := s.Begin(ctx, key, c.idem, h)
		if err != nil || claim2 != nil || stored == nil {
			t.Fatalf("%s: a retry must not run again: claim %v, stored %+v, %v", c.idem, claim2, stored, err)
		}
		if stored.Status != 400 || stored.Kept != c.kept || (c.kept && !bytes.Equal(stored.Body, answer)) {
			t.Errorf("%s: replay status %d kept %v (%d bytes)", c.idem, stored.Status, stored.Kept, len(stored.Body))
		}
	}
}

// TestPlaintextAnswersInvalidated: the migration that brought sealing
// drops answers kept in plaintext before it and keeps their status, so
// such a retry is neither replayed in plaintext nor run again.
func TestPlaintextAnswersInvalidated(t *testing.T) {
	t.Parallel()
	pool, _ := testkit.NewPool(t)
	ctx := context.Background()
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{})
	key := acct.Root.KeyID
	s := idempotency.New(pool, testSealer(t), idempotency.StoreOptions{Stale: time.Minute})
	h := idempotency.Hash("POST", "/api/v1/keys", []byte(`{}`))
	claim, _, err := s.Begin(ctx, key, "sealed", h)
	if err != nil || claim == nil {
		t.Fatal(err)
	}
	if err := claim.Finish(ctx, idempotency.Response{Status: 201, Body: []byte(`{"api_key":"dsk_new"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO idempotency_keys (api_key_id, idem_key, request_hash, status, content_type, body)
		VALUES ($1, 'plain', $2, 201, 'application/json', convert_to('{"api_key":"dsk_old"}', 'UTF8'))`, key, h); err != nil {
		t.Fatal(err)
	}
	up, err := migrations.FS.ReadFile("00017_sealed_replays.sql")
	if err != nil {
		t.Fatal(err)
	}
	upSQL, _, found := bytes.Cut(up, []byte("-- +goose Down"))
	if !found {
		t.Fatal("the migration has no Down section")
	}
	if _, err := pool.Exec(ctx, string(upSQL)); err != nil {
		t.Fatal(err)
	}
	if _, stored, err := s.Begin(ctx, key, "plain", h); err != nil || stored == nil || stored.Kept || stored.Status != 201 {
		t.Fatalf("plaintext answer after the migration: %+v %v", stored, err)
	}
	if _, stored, err := s.Begin(ctx, key, "sealed", h); err != nil || stored == nil || !stored.Kept || string(stored.Body) != `{"api_key":"dsk_new"}` {
		t.Fatalf("sealed answer after the migration: %+v %v", stored, err)
	}
}
