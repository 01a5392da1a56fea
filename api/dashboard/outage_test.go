package dashboard_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestPostgresOutagePage: with the node's pool closed (as when Postgres is
// gone), a dashboard page is an HTML error page with status 503 and
// Retry-After, as REST and MCP answer 503: one classifier for all three.
func TestPostgresOutagePage(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	tn := e.tenant(t, "Outage Co", 1000)
	b := e.signedIn(t, tn)
	if p := b.get(t, "/dashboard/keys"); p.status != http.StatusOK {
		t.Fatalf("keys before the outage: %d", p.status)
	}

	e.pool.Close()

	p := b.send(t, "GET", "/dashboard/keys", nil)
	if p.status != http.StatusServiceUnavailable {
		t.Fatalf("keys without Postgres: %d %.400s", p.status, p.body)
	}
	if ct := p.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("content type %q", ct)
	}
	if p.header.Get("Retry-After") != "1" {
		t.Fatalf("Retry-After %q", p.header.Get("Retry-After"))
	}
	if !strings.Contains(p.body, "a backing service is unavailable; retry shortly") {
		t.Fatalf("page does not say why: %.600s", p.body)
	}
}
