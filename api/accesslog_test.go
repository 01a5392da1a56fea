package api

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"broll/billing/billingtest"
	"broll/internal/config"
)

// accessLines are the access log lines of the request with id.
func (e *testEnv) accessLines(t *testing.T, id string) []map[string]any {
	t.Helper()
	if id == "" {
		t.Fatal("no request id")
	}
	var out []map[string]any
	for _, line := range strings.Split(e.logs.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == "request" && m["request_id"] == id {
			out = append(out, m)
		}
	}
	return out
}

// TestAccessLog: at the default level (info) every request gets exactly one
// line with what an operator looks for first, the trace id of a W3C
// traceparent among it, and never the raw path.
func TestAccessLog(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{configure: func(c *config.Config) { c.LogLevel = "info" }})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	key := acct.CustomerKey(t, e.pool, "alice")
	vid := billingtest.Videos(t, e.pool, 1, "medium")[0]

	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	h := bearerHeader(key.Secret)
	h["traceparent"] = "00-" + trace + "-00f067aa0ba902b7-01"
	r := e.send(t, 0, "GET", "/api/v1/broll/"+vid.String(), h, nil)
	if r.status != 200 {
		t.Fatalf("get video: %d %s", r.status, r.raw)
	}
	lines := e.accessLines(t, r.header.Get("X-Request-Id"))
	if len(lines) != 1 {
		t.Fatalf("%d access log lines for one request: %v", len(lines), lines)
	}
	l := lines[0]
	for field, want := range map[string]any{"level": "INFO", "method": "GET", "route": "/api/v1/broll/:id",
		"status": 200.0, "key_id": key.ID.String(), "trace_id": trace} {
		if l[field] != want {
			t.Errorf("%s = %v, want %v (%v)", field, l[field], want, l)
		}
	}
	if d, ok := l["duration_ms"].(float64); !ok || d < 0 {
		t.Errorf("duration_ms %v", l["duration_ms"])
	}
	if raw, _ := json.Marshal(l); strings.Contains(string(raw), vid.String()) {
		t.Errorf("the raw path is in the line: %s", raw)
	}

	// A traceparent that breaks the format (all-zero trace id, upper-case
	// hex, a wrong length) is ignored; the request is logged without one.
	for _, bad := range []string{"00-" + strings.Repeat("0", 32) + "-00f067aa0ba902b7-01",
		"00-" + strings.ToUpper(trace) + "-00f067aa0ba902b7-01", "00-" + trace + "-00f067aa0ba902b7", "garbage"} {
		h["traceparent"] = bad
		r := e.send(t, 0, "GET", "/api/v1/balance", h, nil)
		lines := e.accessLines(t, r.header.Get("X-Request-Id"))
		if len(lines) != 1 || lines[0]["trace_id"] != nil || lines[0]["route"] != "/api/v1/balance" {
			t.Errorf("traceparent %q: %v", bad, lines)
		}
	}

	// Refusals are logged too, with the route of the edge that refused.
	r = e.do(t, 0, "GET", "/api/v1/balance", "dsk_unknown", nil)
	if lines := e.accessLines(t, r.header.Get("X-Request-Id")); len(lines) != 1 || lines[0]["status"] != 401.0 || lines[0]["key_id"] != nil {
		t.Errorf("401: %v", lines)
	}
}

// TestAccessLogSampling: with BROLL_ACCESS_LOG_SAMPLE=0 a fast success
// leaves no line, but a slow request and a 5xx are always logged.
func TestAccessLogSampling(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{configure: func(c *config.Config) {
		c.LogLevel, c.AccessLogSample, c.AccessLogSlow = "info", 0, time.Hour
	}})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	key := acct.CustomerKey(t, e.pool, "alice").Secret

	r := e.do(t, 0, "GET", "/api/v1/balance", key, nil)
	if lines := e.accessLines(t, r.header.Get("X-Request-Id")); r.status != 200 || len(lines) != 0 {
		t.Fatalf("sampled out: %d %v", r.status, lines)
	}

	// A node for which every request is slow.
	cfg := e.cfg
	cfg.AccessLogSlow = time.Nanosecond
	slow := e.addNode(t, cfg, nil)
	r = e.do(t, slow, "GET", "/api/v1/balance", key, nil)
	if lines := e.accessLines(t, r.header.Get("X-Request-Id")); r.status != 200 || len(lines) != 1 || lines[0]["slow"] != true {
		t.Fatalf("slow request: %d %v", r.status, lines)
	}

	// Postgres gone: 503, logged. The key is in node 0's cache, so the
	// failure is the handler's.
	e.pool.Close()
	r = e.do(t, 0, "GET", "/api/v1/balance", key, nil)
	if lines := e.accessLines(t, r.header.Get("X-Request-Id")); r.status != 503 || len(lines) != 1 || lines[0]["status"] != 503.0 {
		t.Fatalf("5xx: %d %v", r.status, lines)
	}
}

// TestMetricsOfMCPAndBuild: after MCP calls /metrics counts them per tool
// and outcome with their latency, and every node says which build it runs.
func TestMetricsOfMCPAndBuild(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	base := e.serveLoopback(t)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	cs := mcpMustConnect(t, base, acct.RootKey.Secret)
	callToolOK(t, cs, "get_balance", nil)
	callToolOK(t, cs, "get_balance", nil)
	callToolErr(t, cs, "get_video", map[string]any{"video_id": "not-an-id"}, "invalid_request")

	fams := e.scrape(t, 0)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"broll_mcp_tool_calls_total", map[string]string{"tool": "get_balance", "outcome": "ok"}, 2},
		{"broll_mcp_tool_calls_total", map[string]string{"tool": "get_video", "outcome": "refused"}, 1},
		{"broll_mcp_tool_duration_seconds", map[string]string{"tool": "get_balance", "outcome": "ok"}, 2},
		{"broll_mcp_tool_duration_seconds", map[string]string{"tool": "get_video", "outcome": "refused"}, 1},
		{"broll_build_info", map[string]string{"go_version": runtime.Version()}, 1},
	} {
		if got, ok := fams.Value(c.name, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	for _, m := range fams["broll_build_info"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetValue() == "" {
				t.Errorf("build_info label %s is empty", l.GetName())
			}
		}
	}
}
