package api

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
)

// TestKeysListOverHTTP: GET /api/v1/keys pages by cursor with filters, and
// its counters count every request made so far, on any node, with nothing
// flushed to Postgres.
func TestKeysListOverHTTP(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{nodes: 2})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	root := acct.RootKey.Secret
	busy := acct.CustomerKey(t, e.pool, "busy")
	acct.CustomerKey(t, e.pool, "idle")
	for i := 0; i < 5; i++ {
		if r := e.do(t, i%2, "GET", "/api/v1/pricing", busy.Secret, nil); r.status != 200 {
			t.Fatalf("pricing: %d", r.status)
		}
	}

	list := func(query string) brollclient.KeyList {
		t.Helper()
		r := e.do(t, 0, "GET", "/api/v1/keys"+query, root, nil)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", query, r.status, r.raw)
		}
		return decode[brollclient.KeyList](t, r)
	}
	p := list("?customer_label=busy")
	if len(p.Keys) != 1 || p.Keys[0].Id != busy.ID || p.Keys[0].TotalRequests != 5 || p.Keys[0].LastUsedAt == nil {
		t.Fatalf("busy key: %+v", p.Keys)
	}
	var stored int64
	if err := e.pool.QueryRow(context.Background(), `SELECT total_requests FROM api_keys WHERE id = $1`, busy.ID).Scan(&stored); err != nil || stored != 0 {
		t.Fatalf("stored total_requests %d (%v): the list flushed", stored, err)
	}

	first := list("?limit=1")
	if len(first.Keys) != 1 || first.Pagination.Limit != 1 || !first.Pagination.HasMore || first.Pagination.NextCursor == nil {
		t.Fatalf("first page: %+v", first)
	}
	second := list("?limit=1&cursor=" + url.QueryEscape(*first.Pagination.NextCursor))
	if len(second.Keys) != 1 || second.Keys[0].Id == first.Keys[0].Id || second.Pagination.HasMore || second.Pagination.NextCursor != nil {
		t.Fatalf("second page: %+v", second)
	}
	if p := list("?status=revoked"); len(p.Keys) != 0 || p.Pagination.Limit != 100 {
		t.Fatalf("revoked: %+v", p)
	}

	for name, q := range map[string]string{
		"unknown status":       "status=paused",
		"limit zero":           "limit=0",
		"another query's":      "status=active&cursor=" + url.QueryEscape(*first.Pagination.NextCursor),
		"edited cursor":        "cursor=" + url.QueryEscape((*first.Pagination.NextCursor)[2:]),
		"label with a NUL":     "customer_label=a%00b",
		"label past 200 runes": "customer_label=" + strings.Repeat("x", 201),
	} {
		r := e.do(t, 0, "GET", "/api/v1/keys?"+q, root, nil)
		if r.status != 400 || problemOf(t, r).Code != "invalid_request" {
			t.Errorf("%s: %d %s, want 400 invalid_request", name, r.status, r.raw)
		}
	}
}
