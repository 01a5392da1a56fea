package api

import (
	"strconv"
	"testing"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
)

// TestKeyLimitsOverHTTP: a customer key made with a spend limit and a rate
// limit shows both; a PATCH through one node changes the rate limit on the
// other at its next request, although that node had the key cached; a
// purchase past the spend limit is 402 spend_limit_exceeded with the
// numbers; bad values are 400 and another account's key is 404.
func TestKeyLimitsOverHTTP(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{nodes: 2})
	if e.cfg.AuthCacheTTL <= 0 {
		t.Fatal("the test needs the auth cache on")
	}
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 100_000})
	root := acct.RootKey.Secret
	r := e.do(t, 0, "POST", "/api/v1/keys", root, map[string]any{"customer_label": "capped",
		"spend_limit": map[string]any{"amount": 30, "period": "day"}, "rate_limit_per_minute": 7})
	created := expect[brollclient.KeyCreated](t, r, 201)
	key, d := created.ApiKey, created.Details
	id := d.Id.String()
	if d.SpendLimit == nil || d.SpendLimit.Amount != 30 || d.SpendLimit.Period != "day" || d.Spent == nil || d.Spent.Amount != 0 ||
		d.Spent.PeriodResetsAt == nil || d.RateLimitPerMinute == nil || *d.RateLimitPerMinute != 7 {
		t.Fatalf("created key: %s", r.raw)
	}
	limitOn := func(t *testing.T, n int) string {
		t.Helper()
		r := e.do(t, n, "GET", "/api/v1/pricing", key, nil)
		if r.status != 200 {
			t.Fatalf("node %d: %d %s", n, r.status, r.raw)
		}
		return r.header.Get("X-RateLimit-Limit")
	}
	patch := func(t *testing.T, n int, body any) response {
		t.Helper()
		return e.do(t, n, "PATCH", "/api/v1/keys?id="+id, root, body)
	}

	t.Run("a PATCH on one node changes the rate limit the other node applies", func(t *testing.T) {
		if limitOn(t, 0) != "7" || limitOn(t, 1) != "7" {
			t.Fatal("the key's own rate limit is not applied")
		}
		if r := patch(t, 0, map[string]any{"rate_limit_per_minute": 500}); r.status != 200 ||
			*decode[brollclient.KeyUpdated](t, r).Key.RateLimitPerMinute != 500 {
			t.Fatalf("patch: %d %s", r.status, r.raw)
		}
		if got := limitOn(t, 1); got != "500" {
			t.Fatalf("node 1 applies %s requests/min after the change, want 500", got)
		}
		if r := patch(t, 1, map[string]any{"rate_limit_per_minute": nil}); r.status != 200 {
			t.Fatalf("patch to default: %d %s", r.status, r.raw)
		}
		if got, want := limitOn(t, 0), e.cfg.RateLimitPerMinute; got != strconv.Itoa(want) {
			t.Fatalf("node 0 applies %s requests/min after the reset, want the default %d", got, want)
		}
	})

	t.Run("a purchase past the spend limit is 402 with the numbers, on REST and MCP", func(t *testing.T) {
		// $25 fits, another $25 does not, and says why.
		hard := billingtest.Videos(t, e.pool, 2, "hard")
		e.buy(t, 0, key, hard[0])
		r := e.do(t, 1, "POST", "/api/v1/broll/purchase", key, map[string]any{"video_ids": []string{hard[1].String()}})
		if p := problemOf(t, r); r.status != 402 || p.Code != "spend_limit_exceeded" || deref(p.Limit) != 30 || deref(p.Spent) != 25 ||
			deref(p.Required) != 25 || p.PeriodResetsAt == nil {
			t.Fatalf("over the limit: %d %s", r.status, r.raw)
		}
		// Raising it lets the purchase through; the list shows what was spent.
		if r := patch(t, 0, map[string]any{"spend_limit": map[string]any{"amount": 50, "period": "month"}, "customer_label": "capped more"}); r.status != 200 {
			t.Fatalf("raise: %d %s", r.status, r.raw)
		}
		e.buy(t, 1, key, hard[1])
		// get_balance over MCP shows the calling key's limit and spending.
		cs := mcpMustConnect(t, e.serveLoopback(t), key)
		if bk := decode[brollclient.Balance](t, callToolOK(t, cs, "get_balance", nil)).Key; bk.SpendLimit.Amount != 50 || bk.Spent.Amount != 50 {
			t.Fatalf("get_balance: %+v", bk)
		}
		// A purchase over MCP meets the same limit, with the same numbers.
		extra := billingtest.Videos(t, e.pool, 1, "easy")[0].String()
		if out := callToolErr(t, cs, "purchase_videos", map[string]any{"video_ids": []string{extra}}, "spend_limit_exceeded"); deref(out.Spent) != 50 || deref(out.Required) != 5 {
			t.Fatalf("purchase_videos over the limit: %+v", out)
		}
		page := decode[brollclient.KeyList](t, e.do(t, 0, "GET", "/api/v1/keys", root, nil))
		if len(page.Keys) != 1 || page.Keys[0].CustomerLabel != "capped more" || page.Keys[0].Spent.Amount != 50 || page.Keys[0].Spent.Period != "month" {
			t.Fatalf("list: %+v", page.Keys)
		}
	})

	t.Run("bad values are 400, another account's key 404, a customer key 403", func(t *testing.T) {
		for _, bad := range []string{
			`{"rate_limit_per_minute": 0}`,
			`{"rate_limit_per_minute": 100001}`,
			`{"spend_limit": {"amount": 5, "period": "week"}}`,
			`{"spend_limit": {"period": "day"}}`,
			`{"spend_limit": {"amount": -1, "period": "day"}}`,
			`{"customer_label": ""}`,
			`{"nonsense": true}`,
			`{}`,
		} {
			if r := patch(t, 0, bad); r.status != 400 {
				t.Errorf("PATCH %s: %d %s", bad, r.status, r.raw)
			}
		}
		other := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
		if r := e.do(t, 0, "PATCH", "/api/v1/keys?id="+id, other.RootKey.Secret, map[string]any{"rate_limit_per_minute": 5}); r.status != 404 {
			t.Fatalf("another account's key: %d %s", r.status, r.raw)
		}
		if r := e.do(t, 0, "PATCH", "/api/v1/keys?id="+id, key, map[string]any{"rate_limit_per_minute": 5}); r.status != 403 {
			t.Fatalf("a customer key: %d %s", r.status, r.raw)
		}
	})
}
