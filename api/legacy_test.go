package api

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
	"broll/internal/config"
)

// testClock is the sunset clock of a test node; tests move it.
type testClock struct{ unix atomic.Int64 }

func newTestClock(t time.Time) *testClock {
	c := &testClock{}
	c.set(t)
	return c
}

func (c *testClock) set(t time.Time) { c.unix.Store(t.UnixNano()) }
func (c *testClock) now() time.Time  { return time.Unix(0, c.unix.Load()).UTC() }

// testLegacySecret is generated as an operator would make it: the
// configuration refuses short or placeholder secrets.
var testLegacySecret = config.GenerateSecret()

// legacyNode is a node with v0 enabled and its sunset clock in the test's hands.
func (e *testEnv) legacyNode(t *testing.T, clock *testClock) int {
	cfg := e.cfg
	cfg.LegacySecret = config.Secret(testLegacySecret)
	return e.addNode(t, cfg, clock.now)
}

// checkSunsetHeaders asserts the three headers every legacy response
// carries, exactly as v0 clients of the original service read them.
func checkSunsetHeaders(t *testing.T, what string, r response) {
	t.Helper()
	want := map[string]string{
		"Deprecation": "true",
		"Sunset":      "2026-09-01",
		"Link":        `<http://api.test/docs/migration>; rel="deprecation", <http://api.test/docs/migration>; rel="sunset"`,
	}
	for k, v := range want {
		if got := r.header.Values(k); len(got) != 1 || got[0] != v {
			t.Errorf("%s: %s = %q, want exactly %q", what, k, got, v)
		}
	}
	if r.header.Get("X-RateLimit-Limit") != "" {
		t.Errorf("%s: a legacy response carries rate-limit headers", what)
	}
}

func TestLegacyV0BeforeAndAfterSunset(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	clock := newTestClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	n := e.legacyNode(t, clock)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 5000, Legacy: true})
	vids := billingtest.Videos(t, e.pool, 2, "medium")
	auth := bearerHeader(testLegacySecret)
	src := "?source=" + acct.Source
	buy := func(t *testing.T, email string, ids ...string) brollclient.LegacyPurchaseResult {
		t.Helper()
		body := map[string]any{"source": acct.Source, "video_ids": ids}
		if email != "" {
			body["customer_email"] = email
		}
		r := e.send(t, n, "POST", "/api/external/broll/purchase", auth, body)
		checkSunsetHeaders(t, "purchase", r)
		return expect[brollclient.LegacyPurchaseResult](t, r, 200)
	}

	t.Run("a purchase is per customer: the same one again is not charged, another is", func(t *testing.T) {
		r := buy(t, "Ann@Example.com", vids[0].String())
		if r.TotalCharged != 10 || r.Balance != 40 || r.CustomerEmail == nil || *r.CustomerEmail != "ann@example.com" || r.Source != acct.Source {
			t.Fatalf("first purchase: %+v", r)
		}
		first := *r.Purchases[0].PurchaseId
		if !strings.HasPrefix(downloadLink(r.Purchases, 0), "http://api.test/api/v1/downloads/") {
			t.Fatalf("download link: %+v", r.Purchases[0])
		}
		r = buy(t, "ann@example.com", vids[0].String())
		if line := r.Purchases[0]; r.TotalCharged != 0 || r.Balance != 40 || *line.PurchaseId != first || !line.AlreadyOwned {
			t.Fatalf("repeat purchase: %+v", r)
		}
		if r = buy(t, "bob@example.com", vids[0].String()); r.TotalCharged != 10 || r.Balance != 30 {
			t.Fatalf("second customer: %+v", r)
		}
	})

	t.Run("the same key-less catalog as v1, with the secret in either header", func(t *testing.T) {
		list := e.send(t, n, "GET", "/api/external/broll"+src+"&limit=1", map[string]string{"X-API-Key": testLegacySecret}, nil)
		if l := expect[brollclient.VideoList](t, list, 200); len(l.Videos) != 1 || l.Pagination.Total != 2 {
			t.Fatalf("list: %s", list.raw)
		}
		checkSunsetHeaders(t, "list", list)
		one := e.send(t, n, "GET", "/api/external/broll/"+vids[1].String()+src, auth, nil)
		if v := expect[brollclient.Video](t, one, 200); v.Id != vids[1] || v.Price != 10 {
			t.Fatalf("details: %s", one.raw)
		}
		hist := e.send(t, n, "GET", "/api/external/broll/purchases"+src+"&customer_email=ann@example.com", auth, nil)
		if expect[brollclient.PurchaseList](t, hist, 200).Summary.Count != 1 {
			t.Fatalf("legacy purchases: %s", hist.raw)
		}
	})

	t.Run("each refusal is a problem with the sunset headers", func(t *testing.T) {
		for _, c := range []struct {
			method, path string
			header       map[string]string
			body         any
			status       int
			code         string
		}{
			{"GET", "/api/external/broll" + src, nil, nil, 401, "unauthorized"},
			{"GET", "/api/external/broll" + src, map[string]string{"X-API-Key": "wrong"}, nil, 401, "unauthorized"},
			{"GET", "/api/external/broll" + src, bearerHeader(testLegacySecret + "x"), nil, 401, "unauthorized"},
			{"GET", "/api/external/broll", auth, nil, 400, "invalid_request"},
			{"GET", "/api/external/broll?source=nobody", auth, nil, 404, "not_found"},
			{"GET", "/api/external/broll" + src + "&semantic_search=cats", auth, nil, 400, "invalid_request"},
			{"GET", "/api/external/broll/not-a-uuid" + src, auth, nil, 400, "invalid_request"},
			{"GET", "/api/external/broll/purchases", auth, nil, 400, "invalid_request"},
			{"POST", "/api/external/broll/purchase", auth, map[string]any{"video_ids": []string{vids[1].String()}}, 400, "invalid_request"},
			{"POST", "/api/external/broll/purchase", auth, map[string]any{"source": "nobody", "video_ids": []string{vids[1].String()}}, 404, "not_found"},
			{"POST", "/api/external/broll/purchase", auth, map[string]any{"source": acct.Source, "video_ids": []string{vids[1].String()}, "customer_email": "nope"}, 400, "invalid_request"},
			{"GET", "/api/external/broll/a/b", auth, nil, 404, "not_found"},
		} {
			r := e.send(t, n, c.method, c.path, c.header, c.body)
			if r.status != c.status || string(problemOf(t, r).Code) != c.code {
				t.Errorf("%s %s: %d %s, want %d %s", c.method, c.path, r.status, r.raw, c.status, c.code)
			}
			checkSunsetHeaders(t, c.method+" "+c.path, r)
		}
	})

	t.Run("the account's root key sees the legacy purchases in v1", func(t *testing.T) {
		v1 := e.do(t, n, "GET", "/api/v1/broll/purchases", acct.RootKey.Secret, nil)
		v1List := expect[brollclient.PurchaseList](t, v1, 200)
		if v1List.Summary.Count != 2 {
			t.Fatalf("v1 purchases: %s", v1.raw)
		}
		emails := map[string]bool{}
		for _, p := range v1List.Purchases {
			if !p.Legacy || p.ApiKeyId != nil || p.CustomerEmail == nil {
				t.Fatalf("v1 record of a legacy purchase: %+v", p)
			}
			emails[string(*p.CustomerEmail)] = true
		}
		if !emails["ann@example.com"] || !emails["bob@example.com"] {
			t.Fatalf("customer emails in v1: %v", emails)
		}
		if v1.header.Get("Deprecation") != "" {
			t.Fatal("a v1 response carries the legacy headers")
		}
	})

	t.Run("from the sunset on: 410 everywhere, with the same headers, secret or not", func(t *testing.T) {
		clock.set(time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC))
		for _, c := range []struct {
			method, path string
			header       map[string]string
			body         any
		}{
			{"GET", "/api/external/broll" + src, auth, nil},
			{"GET", "/api/external/broll/" + vids[0].String() + src, auth, nil},
			{"POST", "/api/external/broll/purchase", auth, map[string]any{"source": acct.Source, "video_ids": []string{vids[1].String()}}},
			{"GET", "/api/external/broll/purchases" + src, auth, nil},
			{"GET", "/api/external/broll/purchases" + src, nil, nil},
		} {
			r := e.send(t, n, c.method, c.path, c.header, c.body)
			if p := problemOf(t, r); r.status != 410 || p.Code != "sunset" || deref(p.MigrationGuide) != "http://api.test/docs/migration" {
				t.Errorf("after sunset, %s %s: %d %s", c.method, c.path, r.status, r.raw)
			}
			checkSunsetHeaders(t, "after sunset", r)
		}
		if b := checkBalance(t, e, acct.ID); b != 3000 {
			t.Fatalf("balance %d cents after sunset, want 3000", b)
		}
	})
}

func checkBalance(t *testing.T, e *testEnv, account any) int64 {
	t.Helper()
	var b int64
	if err := e.pool.QueryRow(t.Context(), `SELECT balance_cents FROM accounts WHERE id = $1`, account).Scan(&b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLegacyDisabledWithoutSecret(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	clock := newTestClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	n := e.addNode(t, e.cfg, clock.now)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	for _, key := range []string{"", "anything"} {
		r := e.send(t, n, "GET", "/api/external/broll?source="+acct.Source, map[string]string{"X-API-Key": key}, nil)
		if r.status != 404 || problemOf(t, r).Code != "not_found" {
			t.Fatalf("disabled legacy: %d %s", r.status, r.raw)
		}
		checkSunsetHeaders(t, "disabled", r)
	}
}

// TestLegacyOnlyForEnabledSources: with the right secret, a source whose
// account is not marked as a v0 customer gets exactly what an unknown
// source gets (status and body but the request id) on every route, until
// `brollctl legacy enable` marks it; disable turns it off again.
func TestLegacyOnlyForEnabledSources(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	n := e.legacyNode(t, newTestClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)))
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 5000})
	vids := billingtest.Videos(t, e.pool, 1, "easy")
	auth := bearerHeader(testLegacySecret)
	requests := func(source string) [][3]any {
		return [][3]any{
			{"GET", "/api/external/broll?source=" + source, nil},
			{"GET", "/api/external/broll/" + vids[0].String() + "?source=" + source, nil},
			{"GET", "/api/external/broll/purchases?source=" + source, nil},
			{"POST", "/api/external/broll/purchase", map[string]any{"source": source, "video_ids": []string{vids[0].String()}}},
		}
	}
	// normalized drops what differs between any two responses.
	normalized := func(r response) string {
		var body map[string]any // the raw shape: every member but request_id
		_ = json.Unmarshal(r.raw, &body)
		delete(body, "request_id")
		b, _ := json.Marshal(body)
		return strconv.Itoa(r.status) + " " + string(b)
	}
	send := func(source string) []response {
		var out []response
		for _, rq := range requests(source) {
			r := e.send(t, n, rq[0].(string), rq[1].(string), auth, rq[2])
			checkSunsetHeaders(t, rq[1].(string), r)
			out = append(out, r)
		}
		return out
	}
	unknown := send("no-such-source")
	for i, r := range send(acct.Source) {
		if r.status != 404 || normalized(r) != normalized(unknown[i]) {
			t.Errorf("not enabled, request %d: %s, unknown source: %s", i, normalized(r), normalized(unknown[i]))
		}
	}
	if b := checkBalance(t, e, acct.ID); b != 5000 {
		t.Fatalf("a source not enabled was charged: balance %d cents", b)
	}

	ts := e.ctl.Tenancy
	if _, err := ts.SetLegacyEnabled(t.Context(), acct.Source, true); err != nil {
		t.Fatal(err)
	}
	for i, r := range send(acct.Source) {
		if r.status != 200 {
			t.Errorf("enabled, request %d: %d %s", i, r.status, r.raw)
		}
	}
	if b := checkBalance(t, e, acct.ID); b != 4500 {
		t.Fatalf("balance %d cents after an enabled purchase, want 4500", b)
	}

	if _, err := ts.SetLegacyEnabled(t.Context(), acct.Source, false); err != nil {
		t.Fatal(err)
	}
	for i, r := range send(acct.Source) {
		if normalized(r) != normalized(unknown[i]) {
			t.Errorf("disabled again, request %d: %s", i, normalized(r))
		}
	}
}

func TestMigrationGuide(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	md := e.send(t, 0, "GET", "/docs/migration", nil, nil)
	if md.status != 200 || !strings.HasPrefix(md.header.Get("Content-Type"), "text/markdown") ||
		!strings.Contains(string(md.raw), "brollctl legacy migrate-customers") {
		t.Fatalf("markdown guide: %d %q", md.status, md.header.Get("Content-Type"))
	}
	page := e.send(t, 0, "GET", "/docs/migration", map[string]string{"Accept": "text/html,*/*;q=0.8"}, nil)
	if page.status != 200 || !strings.HasPrefix(page.header.Get("Content-Type"), "text/html") ||
		!strings.Contains(string(page.raw), "/api/v1/broll") || strings.Contains(string(page.raw), "<script") {
		t.Fatalf("html guide: %d %q", page.status, page.header.Get("Content-Type"))
	}
}
