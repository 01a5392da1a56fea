package api

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
	"broll/internal/apperr"
	"broll/internal/testkit"
	"broll/tenancy"
	"broll/wiring"
)

// TestV1RoutesAuthMatrix runs every v1 route against every kind of caller.
func TestV1RoutesAuthMatrix(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10000})
	other := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	cust := acct.CustomerKey(t, e.pool, "alice")
	readOnly := acct.CustomerKey(t, e.pool, "read-only", "broll:read")
	billingOnly := acct.CustomerKey(t, e.pool, "billing-only", "broll:billing")
	otherCust := other.CustomerKey(t, e.pool, "mallory")
	revoked := acct.CustomerKey(t, e.pool, "gone")
	if r := e.do(t, 0, "DELETE", "/api/v1/keys?id="+revoked.ID.String(), acct.RootKey.Secret, nil); r.status != 200 {
		t.Fatalf("revoke: %d %s", r.status, r.raw)
	}

	type route struct {
		method, path string
		body         any
		scope        tenancy.Scope
		okStatus     int
	}
	victim := acct.CustomerKey(t, e.pool, "victim")
	video := billingtest.Videos(t, e.pool, 1, "easy")[0]
	routes := []route{
		{"GET", "/api/v1/broll?limit=2", nil, tenancy.ScopeBrollRead, 200},
		{"GET", "/api/v1/broll/filters", nil, tenancy.ScopeBrollRead, 200},
		{"GET", "/api/v1/broll/" + video.String(), nil, tenancy.ScopeBrollRead, 200},
		{"POST", "/api/v1/broll/purchase", map[string]any{"video_ids": []string{video.String()}}, tenancy.ScopeBrollPurchase, 200},
		{"GET", "/api/v1/broll/purchases", nil, tenancy.ScopeBrollBilling, 200},
		{"GET", "/api/v1/balance", nil, tenancy.ScopeBrollBilling, 200},
		{"POST", "/api/v1/keys", map[string]any{"customer_label": "bob"}, tenancy.ScopeKeysManage, 201},
		{"GET", "/api/v1/keys", nil, tenancy.ScopeKeysManage, 200},
		{"DELETE", "/api/v1/keys?id=" + victim.ID.String(), nil, tenancy.ScopeKeysManage, 200},
		{"GET", "/api/v1/pricing", nil, tenancy.ScopePricingRead, 200},
	}
	type caller struct {
		who, key   string
		wantStatus int
		wantCode   string
	}
	for _, rt := range routes {
		cases := []caller{
			{"no key", "", 401, "unauthorized"},
			{"garbage key", "dsk_nope", 401, "unauthorized"},
			{"well-formed unknown key", "dsk_" + strings.Repeat("A", 43), 401, "unauthorized"},
			{"revoked key", revoked.Secret, 401, "unauthorized"},
		}
		if rt.scope == tenancy.ScopeKeysManage {
			cases = append(cases, caller{"customer key of another account", otherCust.Secret, 403, "insufficient_scope"},
				caller{"customer key lacking keys:manage", cust.Secret, 403, "insufficient_scope"})
		} else {
			lacking := readOnly.Secret
			if rt.scope == tenancy.ScopeBrollRead {
				lacking = billingOnly.Secret
			}
			cases = append(cases, caller{"key lacking the scope", lacking, 403, "insufficient_scope"})
		}
		cases = append(cases, caller{"right key", acct.RootKey.Secret, rt.okStatus, ""})

		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			for _, tc := range cases {
				r := e.do(t, 0, rt.method, rt.path, tc.key, rt.body)
				var p brollclient.Problem
				if r.status >= 400 {
					p = problemOf(t, r)
				}
				if r.status != tc.wantStatus || string(p.Code) != tc.wantCode {
					t.Errorf("as %s: got %d %q, want %d %q (%s)", tc.who, r.status, p.Code, tc.wantStatus, tc.wantCode, r.raw)
				}
				if tc.wantStatus == 401 && !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("as %s: 401 without WWW-Authenticate: Bearer", tc.who)
				}
				if tc.wantCode == "insufficient_scope" && string(deref(p.RequiredScope)) != string(rt.scope) {
					t.Errorf("as %s: required_scope %q, want %q", tc.who, deref(p.RequiredScope), rt.scope)
				}
				if tc.wantStatus < 400 && r.header.Get("X-RateLimit-Limit") == "" {
					t.Errorf("as %s: no rate-limit headers", tc.who)
				}
			}
		})
	}

	// Tenant isolation: another account's key id is 404, never 403.
	r := e.do(t, 0, "DELETE", "/api/v1/keys?id="+cust.ID.String(), other.RootKey.Secret, nil)
	if r.status != 404 || problemOf(t, r).Code != "not_found" {
		t.Errorf("revoking another account's key: %d %s", r.status, r.raw)
	}
	if r := e.do(t, 0, "GET", "/api/v1/pricing", cust.Secret, nil); r.status != 200 {
		t.Errorf("customer key of the account was refused after a foreign revoke attempt: %d", r.status)
	}
}

func TestKeyEndpoints(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	root := acct.RootKey.Secret

	t.Run("a bad body is 400 naming what is wrong, and makes no key", func(t *testing.T) {
		for body, want := range map[string]string{
			`{"customer_label":`:        "malformed JSON",
			`[]`:                        "JSON object",
			`{}`:                        "customer_label is required",
			`{"customer_label": "   "}`: "customer_label is required",
			`{"customer_label": "` + strings.Repeat("x", 201) + `"}`: "at most 200",
			`{"customer_label": 7}`:                                  "customer_label must be of type string",
			`{"customer_label": "a", "scopes": ["keys:manage"]}`:     "not grantable",
			`{"customer_label": "a", "scopes": ["broll:fly"]}`:       "not grantable",
			`{"customer_label": "a", "customer_email": "x@y"}`:       "unknown field",
		} {
			r := e.do(t, 0, "POST", "/api/v1/keys", root, body)
			if p := problemOf(t, r); r.status != 400 || p.Code != "invalid_request" || !strings.Contains(p.Detail, want) {
				t.Errorf("POST %s: %d %s, want 400 containing %q", body, r.status, r.raw, want)
			}
		}
		var n int
		if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM api_keys WHERE parent_id IS NOT NULL`).Scan(&n); err != nil || n != 0 {
			t.Fatalf("bad requests created keys: %d %v", n, err)
		}
	})

	created := expect[brollclient.KeyCreated](t, e.do(t, 0, "POST", "/api/v1/keys", root, map[string]any{"customer_label": "  Acme customer 42  ", "scopes": []string{"broll:read", "broll:purchase"}}), 201)
	secret, details := created.ApiKey, created.Details
	if !bool(created.Success) || !strings.HasPrefix(secret, "dsk_") || len(secret) < 4+43 || details.CustomerLabel != "Acme customer 42" ||
		details.TotalRequests != 0 || details.LastUsedAt != nil {
		t.Fatalf("create body: %+v", created)
	}
	id := details.Id.String()

	// The new key works, within its scopes only.
	if r := e.do(t, 0, "GET", "/api/v1/keys", secret, nil); r.status != 403 {
		t.Fatalf("customer key managed keys: %d", r.status)
	}

	keys := expect[brollclient.KeyList](t, e.do(t, 0, "GET", "/api/v1/keys", root, nil), 200).Keys
	if len(keys) != 1 {
		t.Fatalf("list: %+v", keys)
	}
	if k := keys[0]; k.Id.String() != id || k.TotalRequests != 1 || k.LastUsedAt == nil || !strings.HasPrefix(secret, k.KeyPrefix) || k.RevokedAt != nil {
		t.Fatalf("listed key: %+v", k)
	}

	for _, q := range []string{"", "?id=", "?id=nope"} {
		if r := e.do(t, 0, "DELETE", "/api/v1/keys"+q, root, nil); r.status != 400 {
			t.Errorf("DELETE %q: %d", q, r.status)
		}
	}
	if r := e.do(t, 0, "DELETE", "/api/v1/keys?id="+uuid.NewString(), root, nil); r.status != 404 {
		t.Errorf("DELETE unknown: %d", r.status)
	}
	first := expect[brollclient.KeyRevoked](t, e.do(t, 0, "DELETE", "/api/v1/keys?id="+id, root, nil), 200)
	if again := expect[brollclient.KeyRevoked](t, e.do(t, 0, "DELETE", "/api/v1/keys?id="+id, root, nil), 200); !first.RevokedAt.Equal(again.RevokedAt) {
		t.Fatalf("revoke twice: %+v / %+v", first, again)
	}
	// A root key cannot revoke itself through the customer-key endpoint.
	if r := e.do(t, 0, "DELETE", "/api/v1/keys?id="+acct.RootKey.ID.String(), root, nil); r.status != 404 {
		t.Errorf("root revoking itself: %d", r.status)
	}

	// The secret is never logged, not even on failures.
	if strings.Contains(e.logs.String(), secret) || strings.Contains(e.logs.String(), root) {
		t.Fatal("a key secret appeared in the logs")
	}
}

// TestRevocationIsImmediateOnEveryNode: node B has the key cached; revoking
// through node A (or the CLI path) refuses it on B at once.
func TestRevocationIsImmediateOnEveryNode(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{nodes: 2})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	c1 := acct.CustomerKey(t, e.pool, "one")
	c2 := acct.CustomerKey(t, e.pool, "two")
	for n := 0; n < 2; n++ {
		for _, k := range []string{c1.Secret, c2.Secret, acct.RootKey.Secret} {
			if r := e.do(t, n, "GET", "/api/v1/pricing", k, nil); r.status != 200 {
				t.Fatalf("warm-up on node %d: %d", n, r.status)
			}
		}
	}
	if r := e.do(t, 0, "DELETE", "/api/v1/keys?id="+c1.ID.String(), acct.RootKey.Secret, nil); r.status != 200 {
		t.Fatalf("revoke: %d", r.status)
	}
	if r := e.do(t, 1, "GET", "/api/v1/pricing", c1.Secret, nil); r.status != 401 {
		t.Fatalf("revoked key on the other node: %d", r.status)
	}
	if r := e.do(t, 1, "GET", "/api/v1/pricing", c2.Secret, nil); r.status != 200 {
		t.Fatalf("sibling key affected: %d", r.status)
	}

	// Revoking the root (operator CLI path) takes its customer keys on both nodes.
	keyChanges := e.ctl.KeyChanges
	if _, err := keyChanges.Revoke(context.Background(), tenancy.KeyScope{}, acct.RootKey.ID); err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 2; n++ {
		for _, k := range []string{c2.Secret, acct.RootKey.Secret} {
			if r := e.do(t, n, "GET", "/api/v1/pricing", k, nil); r.status != 401 {
				t.Errorf("after root revoke, node %d: %d", n, r.status)
			}
		}
	}
}

// TestRateLimitSharedAcrossNodes: burst = limit = 60/min, one bucket for the
// key whichever node a request reaches: of twice the limit sent through two
// nodes, no more pass than one bucket allows (two buckets of their own would
// pass them all), the refusals are 429 rate_limited with Retry-After, and
// waiting Retry-After is enough.
func TestRateLimitSharedAcrossNodes(t *testing.T) {
	t.Parallel()
	const limit = 60
	e := setup(t, envOpts{nodes: 2, perMinute: limit})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	k1 := acct.CustomerKey(t, e.pool, "busy")
	k2 := acct.CustomerKey(t, e.pool, "quiet")

	admitted := 0
	var refused response
	deadline := time.Now().Add(2 * time.Minute)
	start := testkit.RedisNow(t, e.rdb)
	// Twice the limit, then on until a refusal to read (on a machine so
	// slow that the bucket refills as fast as requests arrive, that takes
	// longer, never fails).
	for i := 0; i < 2*limit || refused.status == 0; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("no 429 after %d requests", i)
		}
		r := e.do(t, i%2, "GET", "/api/v1/pricing", k1.Secret, nil)
		switch {
		case r.status == 200:
			admitted++
		case r.status == 429 && i >= limit:
			refused = r
		default:
			t.Fatalf("request %d: %d %s (the first %d always pass)", i, r.status, r.raw, limit)
		}
		if i == 0 && (r.header.Get("X-RateLimit-Limit") != "60" || r.header.Get("X-RateLimit-Remaining") != "59") {
			t.Fatalf("first response headers: %v", r.header)
		}
	}
	elapsed := testkit.RedisNow(t, e.rdb).Sub(start)
	if most := testkit.AdmittedAtMost(limit, elapsed); admitted > most {
		t.Fatalf("%d requests passed in %s through two nodes; one shared bucket passes at most %d", admitted, elapsed, most)
	}
	retry, err := strconv.Atoi(refused.header.Get("Retry-After"))
	if err != nil || retry < 1 || refused.header.Get("X-RateLimit-Limit") != "60" || problemOf(t, refused).Code != "rate_limited" {
		t.Fatalf("429 response: %v %s", refused.header, refused.raw)
	}
	if r := e.do(t, 1, "GET", "/api/v1/pricing", k2.Secret, nil); r.status != 200 {
		t.Fatalf("second key affected: %d", r.status)
	}
	// The client's side of the contract: it waits what the last refusal's
	// Retry-After says (whole seconds, rounded up; at least the one second
	// a request admitted after it spends), counted from when it read the
	// answer, so the next request is admitted however slow the machine:
	// slowness only adds to the wait. This is the behaviour under test, not
	// a wait for background work.
	time.Sleep(time.Duration(retry) * time.Second)
	if r := e.do(t, 0, "GET", "/api/v1/pricing", k1.Secret, nil); r.status != 200 {
		t.Fatalf("after waiting Retry-After=%d: %d", retry, r.status)
	}
}

// TestPerKeyRateLimitOverride: a key's own limit (3/min) replaces the
// default: every answer says so, the first three pass, and no more pass
// than three a minute allows.
func TestPerKeyRateLimitOverride(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	k := acct.CustomerKey(t, e.pool, "small")
	if _, err := e.pool.Exec(context.Background(), `UPDATE api_keys SET rate_limit_per_minute = 3 WHERE id = $1`, k.ID); err != nil {
		t.Fatal(err)
	}
	start := testkit.RedisNow(t, e.rdb)
	admitted := 0
	for i := 0; i < 4; i++ {
		r := e.do(t, 0, "GET", "/api/v1/pricing", k.Secret, nil)
		if r.header.Get("X-RateLimit-Limit") != "3" {
			t.Fatalf("request %d: X-RateLimit-Limit %q, want the key's 3", i, r.header.Get("X-RateLimit-Limit"))
		}
		switch {
		case r.status == 200:
			admitted++
		case r.status != 429 || i < 3:
			t.Fatalf("request %d: %d %s", i, r.status, r.raw)
		}
	}
	if most := testkit.AdmittedAtMost(3, testkit.RedisNow(t, e.rdb).Sub(start)); admitted > most {
		t.Fatalf("%d of 4 requests passed; 3 a minute allows %d", admitted, most)
	}
}

// TestRedisDownFallsBack: with Redis unreachable the API keeps serving with
// the in-process limiter, and counts it.
func TestRedisDownFallsBack(t *testing.T) {
	t.Parallel()
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = dead.Close() })
	e := setup(t, envOpts{perMinute: 5, rdb: dead})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	k := acct.CustomerKey(t, e.pool, "k")
	// The in-process limiter reads the node's clock, time.Now.
	start := time.Now()
	admitted := 0
	for i := 0; i < 6; i++ {
		r := e.do(t, 0, "GET", "/api/v1/pricing", k.Secret, nil)
		if r.header.Get("X-RateLimit-Limit") != "5" {
			t.Fatalf("no rate-limit headers in fallback: %v", r.header)
		}
		switch {
		case r.status == 200:
			admitted++
		case r.status != 429 || i < 5:
			t.Fatalf("request %d: %d %s", i, r.status, r.raw)
		}
	}
	if most := testkit.AdmittedAtMost(5, time.Since(start)); admitted > most {
		t.Fatalf("%d of 6 requests passed; 5 a minute allows %d", admitted, most)
	}
	if e.nodes[0].gate.Fallbacks() != 6 {
		t.Fatalf("fallbacks counted %d", e.nodes[0].gate.Fallbacks())
	}
	if !strings.Contains(e.logs.String(), "in-process limiter") {
		t.Fatal("fallback not logged")
	}
	// Revocation still holds without Redis: the database is asked directly.
	// The keyChanges says its markers are not written, and the rows are revoked.
	keyChanges := e.graph(t, e.cfg, wiring.Options{Parts: wiring.CLIParts, Redis: dead}).KeyChanges
	if _, err := keyChanges.Revoke(context.Background(), tenancy.KeyScope{}, k.ID); apperr.CodeOf(err) != apperr.Unavailable {
		t.Fatalf("revoke without Redis: %v", err)
	}
	if r := e.do(t, 0, "GET", "/api/v1/pricing", k.Secret, nil); r.status != 401 {
		t.Fatalf("revoked key during Redis outage: %d", r.status)
	}
}

func TestUnknownRouteAndBodyLimit(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	r := e.do(t, 0, "GET", "/nope", "", nil)
	if r.status != http.StatusNotFound || problemOf(t, r).Code != "not_found" {
		t.Fatalf("unknown route: %d %s", r.status, r.raw)
	}
	// The body limit is enforced by the server before routing, so this part
	// goes through a real listener.
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = e.nodes[0].app.Listener(ln) }()
	t.Cleanup(func() { _ = e.nodes[0].app.Shutdown() })
	// Announce a body over the limit: the server answers from the headers
	// alone, so the client never races a reset while still writing.
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/v1/keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n{", acct.RootKey.Secret, e.cfg.MaxBodyBytes+1)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(raw), `"code":"payload_too_large"`) ||
		!strings.HasPrefix(res.Header.Get("Content-Type"), "application/problem+json") {
		t.Fatalf("big body: %d %s", res.StatusCode, raw)
	}
}
