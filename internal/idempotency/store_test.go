package idempotency_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/internal/idempotency"
	"broll/internal/testkit"
)

// TestExpiry: a row older than the TTL is taken over by the next request
// with its key (with another body, even), an unfinished row is taken over
// once stale, and expired rows are purged as requests go by.
func TestExpiry(t *testing.T) {
	t.Parallel()
	pool, _ := testkit.NewPool(t)
	ctx := context.Background()
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{})
	key := acct.Root.KeyID
	s := idempotency.New(pool, testSealer(t), idempotency.StoreOptions{Stale: time.Minute})
	a, b := idempotency.Hash("POST", "/x", []byte("a")), idempotency.Hash("POST", "/x", []byte("b"))

	claim, _, err := s.Begin(ctx, key, "k", a)
	if err != nil || claim == nil {
		t.Fatalf("first: %v", err)
	}
	if err := claim.Finish(ctx, idempotency.Response{Status: 201, Body: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	if _, stored, err := s.Begin(ctx, key, "k", a); err != nil || stored == nil || stored.Status != 201 {
		t.Fatalf("replay: %+v %v", stored, err)
	}
	if _, err := pool.Exec(ctx, `UPDATE idempotency_keys SET created_at = now() - interval '25 hours'`); err != nil {
		t.Fatal(err)
	}
	running, _, err := s.Begin(ctx, key, "k", b)
	if err != nil || running == nil {
		t.Fatalf("after 24 h the key is free again: %v", err)
	}
	t.Cleanup(func() { _ = running.Release(ctx) })
	// Unfinished, its owner's lock still held (a session the server keeps
	// for a client it cannot reach): another request waits until it is stale.
	if _, _, err := s.Begin(ctx, key, "k", b); err == nil {
		t.Fatal("a running request's key was handed out twice")
	}
	if _, err := pool.Exec(ctx, `UPDATE idempotency_keys SET created_at = now() - interval '3 minutes'`); err != nil {
		t.Fatal(err)
	}
	stale, _, err := s.Begin(ctx, key, "k", b)
	if err != nil || stale == nil {
		t.Fatalf("a stale claim is taken over: %v", err)
	}
	t.Cleanup(func() { _ = stale.Release(ctx) })

	if _, err := pool.Exec(ctx, `INSERT INTO idempotency_keys (api_key_id, idem_key, request_hash, status, created_at)
		SELECT $1, 'old-' || g, '\x00', 200, now() - interval '25 hours' FROM generate_series(1, 100) g`, key); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 64; i++ {
		claim, _, err := s.Begin(ctx, key, "new", a)
		if err != nil {
			t.Fatal(err)
		}
		if claim != nil {
			if err := claim.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	var old int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM idempotency_keys WHERE idem_key LIKE 'old-%'`).Scan(&old); err != nil || old != 0 {
		t.Fatalf("%d expired rows left (%v)", old, err)
	}
}

// TestLockNameAsBefore: the key's lock is named from the API key id as
// uuid's text, which must be the text the builds before sent (the id as a
// text argument): during a rolling deploy, nodes of both builds take the
// same lock for a key.
func TestLockNameAsBefore(t *testing.T) {
	t.Parallel()
	pool, _ := testkit.NewPool(t)
	for _, id := range []uuid.UUID{uuid.New(), uuid.MustParse("ABCDEF01-2345-6789-ABCD-EF0123456789"), uuid.Nil} {
		var same bool
		if err := pool.QueryRow(context.Background(),
			`SELECT hashtextextended('broll:idem:' || $1::text || ':' || $2::text, 0) =
			        hashtextextended('broll:idem:' || $3::uuid::text || ':' || $2::text, 0)`,
			id, "k", id).Scan(&same); err != nil {
			t.Fatal(err)
		}
		if !same {
			t.Fatalf("key %s: the lock's name differs from the one the builds before took", id)
		}
	}
}
