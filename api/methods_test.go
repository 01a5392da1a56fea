package api

import (
	"testing"

	"github.com/google/uuid"

	"broll/billing/billingtest"
)

// TestMethodNotAllowed: a path the API serves, asked with a method it does
// not take, is 405 with Allow listing the methods it does take; an unknown
// path stays 404. The v1 edge still authenticates first, so a caller
// without a key learns nothing about the routes.
func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	key := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 100}).RootKey.Secret
	cases := []struct {
		method, path, key string
		status            int
		allow             string
	}{
		// GET matches /api/v1/broll/:id (a bad id, 400), so it is allowed.
		{"DELETE", "/api/v1/broll/purchase", key, 405, "GET, HEAD, POST"},
		{"POST", "/api/v1/balance", key, 405, "GET, HEAD"},
		{"PUT", "/api/v1/keys", key, 405, "GET, HEAD, POST, DELETE, PATCH"},
		{"POST", "/api/v1/broll/" + uuid.NewString(), key, 405, "GET, HEAD"},
		{"PATCH", "/healthz", "", 405, "GET, HEAD"},
		{"POST", "/API/V1/Balance/", key, 405, "GET, HEAD"}, // routing is case- and slash-insensitive
		{"POST", "/api/v1/balance", "", 401, ""},
		{"GET", "/api/v1/no-such-thing", key, 404, ""},
		{"DELETE", "/no/such/path", "", 404, ""},
	}
	for _, c := range cases {
		r := e.do(t, 0, c.method, c.path, c.key, nil)
		if r.status != c.status || r.header.Get("Allow") != c.allow {
			t.Errorf("%s %s: %d Allow %q, want %d Allow %q: %s", c.method, c.path, r.status, r.header.Get("Allow"), c.status, c.allow, r.raw)
		}
		if c.status == 405 && problemOf(t, r).Code != "method_not_allowed" {
			t.Errorf("%s %s: code %q", c.method, c.path, problemOf(t, r).Code)
		}
	}
}
