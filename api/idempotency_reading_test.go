package api

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"broll/billing/billingtest"
)

// TestIdempotencyOneReading: two bodies that name a member twice, the
// second time in another case, in either order, cannot share an
// Idempotency-Key as two readings of one request: each is refused as
// invalid before anything is bought or claimed (POST /broll/purchase and
// POST /keys). A body whose names differ only in case from the first, a
// default written out, a UUID in capitals or a total written as 25, 25.0
// or 25.00 is the same request and gets the first answer; another clip
// under the same key is 422.
func TestIdempotencyOneReading(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	ctx := context.Background()
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10_000})
	clips := billingtest.Videos(t, e.pool, 2, "hard")
	x, y := clips[0].String(), clips[1].String()
	buyer := acct.CustomerKey(t, e.pool, "buyer").Secret
	post := func(path, key, idem, body string) response {
		t.Helper()
		return e.send(t, 0, "POST", path, map[string]string{"Authorization": "Bearer " + key, "Idempotency-Key": idem}, body)
	}
	bought := func() int {
		t.Helper()
		var n int
		if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM purchases WHERE account_id = $1`, acct.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	for _, body := range []string{
		fmt.Sprintf(`{"video_ids":[%q],"VIDEO_IDS":[%q]}`, x, y),
		fmt.Sprintf(`{"VIDEO_IDS":[%q],"video_ids":[%q]}`, y, x),
	} {
		r := post("/api/v1/broll/purchase", buyer, "K1", body)
		if r.status != 400 || problemOf(t, r).Code != "invalid_request" || !strings.EqualFold(deref(problemOf(t, r).Field), "video_ids") ||
			r.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("purchase %s: %d %v %s", body, r.status, r.header, r.raw)
		}
	}
	if n := bought(); n != 0 {
		t.Fatalf("%d purchases after two refused bodies", n)
	}
	for _, body := range []string{`{"customer_label":"a","CUSTOMER_LABEL":"b"}`, `{"CUSTOMER_LABEL":"b","customer_label":"a"}`} {
		r := post("/api/v1/keys", acct.RootKey.Secret, "K1", body)
		if r.status != 400 || problemOf(t, r).Code != "invalid_request" || !strings.EqualFold(deref(problemOf(t, r).Field), "customer_label") {
			t.Fatalf("keys %s: %d %s", body, r.status, r.raw)
		}
	}
	var keys int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM api_keys WHERE parent_id = $1 AND label IN ('a', 'b')`, acct.Root.KeyID).Scan(&keys); err != nil || keys != 0 {
		t.Fatalf("%d keys made from refused bodies (%v)", keys, err)
	}

	// The refusals used nothing up: K1 now buys x.
	first := post("/api/v1/broll/purchase", buyer, "K1", fmt.Sprintf(`{"VIDEO_IDS":[%q],"expected_total":25}`, strings.ToUpper(x)))
	if first.status != 200 || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first purchase: %d %s", first.status, first.raw)
	}
	for _, body := range []string{
		fmt.Sprintf(`{"video_ids":[%q],"expected_total":25.0}`, x),
		fmt.Sprintf(` { "expected_total" : 25.00 , "Video_Ids" : [ %q ] , "dry_run" : false } `, x),
		fmt.Sprintf(`{"\u0076ideo_ids":[%q],"expected_total":25}`, x),
	} {
		r := post("/api/v1/broll/purchase", buyer, "K1", body)
		if r.status != 200 || r.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(r.raw, first.raw) {
			t.Errorf("same purchase written as %s: %d %v %s", body, r.status, r.header.Get("Idempotent-Replayed"), r.raw)
		}
	}
	if r := post("/api/v1/broll/purchase", buyer, "K1", fmt.Sprintf(`{"video_ids":[%q],"expected_total":25}`, y)); r.status != 422 ||
		problemOf(t, r).Code != "idempotency_key_reused" {
		t.Errorf("another clip under K1: %d %s", r.status, r.raw)
	}
	if n := bought(); n != 1 {
		t.Errorf("%d purchases, want 1", n)
	}
}
