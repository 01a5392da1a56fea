package api

import (
	"net/http"
	"testing"

	"broll/billing/billingtest"
)

// TestPostgresOutageIsUnavailable: with the node's pool closed (as when
// Postgres is gone), REST and MCP both answer 503 unavailable, worth a
// retry, never a 500. Keys are authenticated from the node's cache (as
// they are while Postgres is away), so the failure is the handler's query.
func TestPostgresOutageIsUnavailable(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 5000})
	key := acct.CustomerKey(t, e.pool, "agent")
	base := e.serveLoopback(t)
	cs := mcpMustConnect(t, base, key.Secret)
	if r := e.do(t, 0, "GET", "/api/v1/balance", key.Secret, nil); r.status != http.StatusOK {
		t.Fatalf("balance before the outage: %d %s", r.status, r.raw)
	}
	callToolOK(t, cs, "get_balance", nil)

	e.pool.Close()

	t.Run("REST", func(t *testing.T) {
		r := e.do(t, 0, "GET", "/api/v1/balance", key.Secret, nil)
		if r.status != http.StatusServiceUnavailable || problemOf(t, r).Code != "unavailable" {
			t.Fatalf("balance without Postgres: %d %s", r.status, r.raw)
		}
		if r.header.Get("Retry-After") != "1" {
			t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
		}
		if problemOf(t, r).Detail != "a backing service is unavailable; retry shortly" {
			t.Fatalf("detail %q", problemOf(t, r).Detail)
		}
	})
	t.Run("MCP", func(t *testing.T) {
		out := callToolErr(t, cs, "get_balance", nil, "unavailable")
		if !*out.Retryable || out.Message != "a backing service is unavailable; retry shortly" {
			t.Fatalf("get_balance without Postgres: %+v", out)
		}
	})
}
