package api

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
	"broll/internal/config"
)

func withIdempotencyWait(d time.Duration) func(*config.Config) {
	return func(c *config.Config) { c.IdempotencyWait = d }
}

// TestIdempotentReplay: a retried POST /keys or purchase with the same
// Idempotency-Key and body gets the first answer again, marked replayed,
// on any node, and nothing runs twice; the same key with another body is
// 422; an error answer is kept like any other, but a body refused as
// invalid claims no key; another API key's use of the same
// Idempotency-Key is its own.
func TestIdempotentReplay(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{nodes: 2})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10_000})
	root := acct.RootKey.Secret
	send := func(n int, path, key, idem string, body any) response {
		t.Helper()
		return e.send(t, n, "POST", path, map[string]string{"Authorization": "Bearer " + key, "Idempotency-Key": idem}, body)
	}

	first := send(0, "/api/v1/keys", root, "create-1", map[string]any{"customer_label": "once", "scopes": []string{"broll:read", "broll:purchase"}})
	// The same body written another way is the same request.
	again := send(1, "/api/v1/keys", root, "create-1", `{ "scopes": ["broll:read", "broll:purchase"],  "customer_label": "once" }`)
	if first.status != 201 || again.status != 201 || !bytes.Equal(first.raw, again.raw) {
		t.Fatalf("replay: %d %s then %d %s", first.status, first.raw, again.status, again.raw)
	}
	if first.header.Get("Idempotent-Replayed") != "" || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("Idempotent-Replayed: %q then %q", first.header.Get("Idempotent-Replayed"), again.header.Get("Idempotent-Replayed"))
	}
	var made int
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM api_keys WHERE parent_id = $1 AND label = 'once'`,
		acct.Root.KeyID).Scan(&made); err != nil || made != 1 {
		t.Fatalf("%d keys made (%v), want 1", made, err)
	}
	if r := send(0, "/api/v1/keys", root, "create-1", map[string]any{"customer_label": "twice"}); r.status != 422 || problemOf(t, r).Code != "idempotency_key_reused" {
		t.Fatalf("reuse with another body: %d %s", r.status, r.raw)
	}

	// A purchase: charged once, answered twice; an error answer is kept too.
	customer := decode[brollclient.KeyCreated](t, first).ApiKey
	clip := billingtest.Videos(t, e.pool, 1, "hard")[0].String()
	buy := map[string]any{"video_ids": []string{clip}}
	p1 := send(0, "/api/v1/broll/purchase", customer, "buy-1", buy)
	p2 := send(1, "/api/v1/broll/purchase", customer, "buy-1", buy)
	if p1.status != 200 || p2.status != 200 || !bytes.Equal(p1.raw, p2.raw) || p2.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("purchase replay: %d %s then %d %s", p1.status, p1.raw, p2.status, p2.raw)
	}
	var balance int64
	if err := e.pool.QueryRow(context.Background(), `SELECT balance_cents FROM accounts WHERE id = $1`, acct.ID).Scan(&balance); err != nil || balance != 7500 {
		t.Fatalf("balance %d (%v), want 75.00 after one charge", balance, err)
	}
	unknown := map[string]any{"video_ids": []string{"00000000-0000-4000-8000-000000000001"}}
	u1, u2 := send(0, "/api/v1/broll/purchase", customer, "buy-unknown", unknown), send(1, "/api/v1/broll/purchase", customer, "buy-unknown", unknown)
	if u1.status != 404 || u2.status != 404 || u2.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(u1.raw, u2.raw) {
		t.Fatalf("error replay: %d then %d %v", u1.status, u2.status, u2.header)
	}
	// A body refused as invalid is never read as a request: it claims no
	// key, and the corrected body runs under the same key.
	bad := map[string]any{"video_ids": []string{"not-a-uuid"}}
	b1, b2 := send(0, "/api/v1/broll/purchase", customer, "buy-bad", bad), send(1, "/api/v1/broll/purchase", customer, "buy-bad", bad)
	if b1.status != 400 || b2.status != 400 || b2.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("invalid body: %d then %d %v", b1.status, b2.status, b2.header)
	}
	if r := send(0, "/api/v1/broll/purchase", customer, "buy-bad", map[string]any{"video_ids": []string{clip}, "dry_run": true}); r.status != 200 ||
		r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("corrected body under the refused body's key: %d %s", r.status, r.raw)
	}
	// Another key's "buy-1" is another request.
	other := acct.CustomerKey(t, e.pool, "other")
	if r := send(0, "/api/v1/broll/purchase", other.Secret, "buy-1", buy); r.status != 200 || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("another key's buy-1: %d %v %s", r.status, r.header, r.raw)
	}
	// (A control character other than tab never reaches the route: the HTTP
	// parser refuses it, TestUnparsableRequestHeadersGetAProblem.)
	for _, k := range []string{strings.Repeat("k", 256), "tab\there", "é"} {
		if r := send(0, "/api/v1/broll/purchase", customer, k, buy); r.status != 400 {
			t.Errorf("Idempotency-Key %q: %d %s", k, r.status, r.raw)
		}
	}
}

// TestIdempotentConcurrentDuplicates: while the first request with a key
// runs (held at the account's row lock), a duplicate on another node gets
// 409 idempotency_key_in_use when it may not wait, and the first answer
// when it may; the purchase is charged once either way.
func TestIdempotentConcurrentDuplicates(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		wait time.Duration
	}{{"no wait", 0}, {"waits", time.Minute}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, envOpts{nodes: 2, configure: withIdempotencyWait(c.wait)})
			ctx := context.Background()
			acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10_000})
			key := acct.CustomerKey(t, e.pool, "dup").Secret
			buy := map[string]any{"video_ids": []string{billingtest.Videos(t, e.pool, 1, "easy")[0].String()}}
			header := map[string]string{"Authorization": "Bearer " + key, "Idempotency-Key": "dup-1"}

			hold, err := e.pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = hold.Rollback(ctx) }()
			if _, err := hold.Exec(ctx, `SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE`, acct.ID); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			var firstResp response
			wg.Add(1)
			go func() {
				defer wg.Done()
				firstResp = e.send(t, 0, "POST", "/api/v1/broll/purchase", header, buy)
			}()
			// The first request has claimed the key once its row exists.
			for claimed, deadline := 0, time.Now().Add(30*time.Second); claimed == 0; {
				if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM idempotency_keys WHERE idem_key = 'dup-1'`).Scan(&claimed); err != nil {
					t.Fatal(err)
				}
				if claimed == 0 && time.Now().After(deadline) {
					t.Fatal("the first request never claimed the key")
				}
				time.Sleep(5 * time.Millisecond)
			}
			var dup response
			if c.wait == 0 {
				dup = e.send(t, 1, "POST", "/api/v1/broll/purchase", header, buy)
				if dup.status != 409 || problemOf(t, dup).Code != "idempotency_key_in_use" {
					t.Fatalf("duplicate while the first runs: %d %s", dup.status, dup.raw)
				}
				if err := hold.Commit(ctx); err != nil {
					t.Fatal(err)
				}
				wg.Wait()
				dup = e.send(t, 1, "POST", "/api/v1/broll/purchase", header, buy)
			} else {
				wg.Add(1)
				go func() {
					defer wg.Done()
					dup = e.send(t, 1, "POST", "/api/v1/broll/purchase", header, buy)
				}()
				if err := hold.Commit(ctx); err != nil {
					t.Fatal(err)
				}
				wg.Wait()
			}
			if firstResp.status != 200 || dup.status != 200 || !bytes.Equal(firstResp.raw, dup.raw) || dup.header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("first %d %s, duplicate %d %s", firstResp.status, firstResp.raw, dup.status, dup.raw)
			}
			var balance int64
			if err := e.pool.QueryRow(ctx, `SELECT balance_cents FROM accounts WHERE id = $1`, acct.ID).Scan(&balance); err != nil || balance != 9500 {
				t.Fatalf("balance %d (%v), want 95.00 after one charge", balance, err)
			}
		})
	}
}
