package api

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/internal/metrics"
	"broll/internal/testkit"
)

// scrape reads node n's metrics as its metrics listener serves them.
func (e *testEnv) scrape(t *testing.T, n int) testkit.Metrics {
	t.Helper()
	rec := httptest.NewRecorder()
	metrics.Handler(e.nodes[n].metrics).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Body.Bytes())
	}
	return testkit.ParseMetrics(t, rec.Body.Bytes())
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{perMinute: 5})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 1500})
	alice := acct.CustomerKey(t, e.pool, "alice")
	bob := acct.CustomerKey(t, e.pool, "bob")
	vids := billingtest.Videos(t, e.pool, 3, "medium")

	// 5 a minute: the first 5 pass, and the other 2 are refused unless the
	// bucket refilled meanwhile; the metrics must count what happened.
	statuses := map[int]float64{}
	start := testkit.RedisNow(t, e.rdb)
	for range 7 {
		statuses[e.do(t, 0, "GET", "/api/v1/pricing", alice.Secret, nil).status]++
	}
	if most := testkit.AdmittedAtMost(5, testkit.RedisNow(t, e.rdb).Sub(start)); statuses[200] < 5 ||
		statuses[200] > float64(most) || statuses[200]+statuses[429] != 7 {
		t.Fatalf("statuses %v: want 5 to %d x 200, the rest 429", statuses, most)
	}
	buy := func(key string, ids ...uuid.UUID) int {
		return e.do(t, 0, "POST", "/api/v1/broll/purchase", key, map[string]any{"video_ids": ids}).status
	}
	if s := buy(bob.Secret, vids[0]); s != 200 {
		t.Fatalf("purchase: %d", s)
	}
	if s := buy(bob.Secret, vids[0]); s != 200 { // already owned: no charge
		t.Fatalf("re-purchase: %d", s)
	}
	if s := buy(bob.Secret, vids[1], vids[2]); s != 402 { // 20.00 > 5.00 left
		t.Fatalf("purchase over the balance: %d", s)
	}
	e.do(t, 0, "GET", "/no/such/thing/"+uuid.NewString(), "", nil)
	e.do(t, 0, "GET", "/api/v1/pricing", "dsk_unknown", nil)
	// The public port does not serve the metrics: they name routes, keys'
	// traffic and revenue, and have their own listener (BROLL_METRICS_ADDR).
	if r := e.do(t, 0, "GET", "/metrics", "", nil); r.status != 404 {
		t.Errorf("public /metrics: %d %s", r.status, r.raw)
	}

	fams := e.scrape(t, 0)
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"broll_http_requests_total", map[string]string{"route": "/api/v1/pricing", "status": "200", "method": "GET"}, statuses[200]},
		// Refused by the v1 group's middleware: labelled with its prefix.
		{"broll_http_requests_total", map[string]string{"route": "/api/v1", "status": "429"}, statuses[429]},
		{"broll_http_requests_total", map[string]string{"route": "/api/v1", "status": "401"}, 1},
		{"broll_http_requests_total", map[string]string{"route": "unmatched", "status": "404"}, 2},
		{"broll_http_requests_total", map[string]string{"route": "/api/v1/broll/purchase", "status": "402"}, 1},
		{"broll_http_request_duration_seconds", map[string]string{"route": "/api/v1/broll/purchase"}, 3},
		{"broll_rate_limited_total", nil, statuses[429]},
		{"broll_rate_limiter_fallbacks_total", nil, 0},
		{"broll_purchase_requests_total", map[string]string{"api": "v1", "result": "charged"}, 1},
		{"broll_purchase_requests_total", map[string]string{"api": "v1", "result": "already_owned"}, 1},
		{"broll_purchase_requests_total", map[string]string{"api": "v1", "result": "refused", "code": "insufficient_credits"}, 1},
		{"broll_videos_purchased_total", nil, 1},
		{"broll_purchase_charged_cents_total", nil, 1000},
	}
	for _, c := range checks {
		got, ok := fams.Value(c.name, c.labels)
		if (!ok && c.want != 0) || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	// Help text speaks REST's noun for the pool, the balance; metric names
	// and label values are an interface and keep theirs.
	for name, fam := range fams {
		if strings.HasPrefix(name, "broll_") && strings.Contains(strings.ToLower(fam.GetHelp()), "credit") {
			t.Errorf("%s help still says credit: %q", name, fam.GetHelp())
		}
	}
	for _, name := range []string{"pgxpool_acquired_conns", "pgxpool_max_conns", "go_goroutines", "process_resident_memory_bytes"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	// The access log carries the request id a problem body
	// shows, so a client's report leads to the log line.
	r := e.do(t, 0, "GET", "/api/v1/broll/"+uuid.NewString(), bob.Secret, nil)
	if id := problemOf(t, r).RequestId; id == "" || !strings.Contains(e.logs.String(), `"request_id":"`+id+`"`) {
		t.Errorf("request id %q of a 404 not in the logs", id)
	}
	// Route patterns, never raw paths: ids must not become label values.
	for _, m := range fams["broll_http_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if strings.Count(l.GetValue(), "-") >= 4 {
				t.Errorf("label %s=%q looks like a raw id", l.GetName(), l.GetValue())
			}
		}
	}
}
