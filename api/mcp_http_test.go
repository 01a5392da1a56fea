package api

import (
	"strings"
	"testing"

	"broll/billing/billingtest"
)

// TestMCPHTTPEdge covers what happens before any JSON-RPC: authentication,
// methods, Origin and the transport's own checks.
func TestMCPHTTPEdge(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	base := e.serveLoopback(t)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 700})
	key := acct.RootKey.Secret

	// 401 before JSON-RPC, for the raw request and for the SDK client.
	for _, k := range []string{"", "dsk_" + strings.Repeat("A", 43)} {
		r := mcpPost(t, base, k, nil, toolsCallBalance)
		if r.status != 401 || problemOf(t, r).Code != "unauthorized" || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
			t.Fatalf("key %q: %d %s", k, r.status, r.raw)
		}
	}
	if _, err := mcpConnect(t, base, "", legacyProtocol); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Fatalf("client without a key: %v", err)
	}

	// Stateless: no initialize needed, a session id is ignored, and every
	// response carries the rate-limit headers of REST.
	r := mcpPost(t, base, key, map[string]string{"Mcp-Session-Id": "made-up", "Mcp-Protocol-Version": legacyProtocol}, toolsCallBalance)
	result := expect[rpcResponse](t, r, 200).Result
	if result == nil || result.IsError || r.header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("stateless call: %v %s", r.header, r.raw)
	}
	if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") || r.header.Get("X-RateLimit-Limit") != "60" ||
		r.header.Get("X-RateLimit-Remaining") == "" || r.header.Get("X-Request-Id") == "" {
		t.Fatalf("headers: %v", r.header)
	}
	if bal := decode[balanceBody](t, response{raw: result.StructuredContent}); bal.Balance != 7 {
		t.Fatalf("structuredContent: %+v", bal)
	}

	// GET and DELETE: 405 with Allow: POST, as the transport spec has a
	// stateless server answer them.
	for _, m := range []string{"GET", "DELETE"} {
		r := mcpSend(t, m, base, key, map[string]string{"Accept": "text/event-stream"}, "")
		if r.status != 405 || problemOf(t, r).Code != "method_not_allowed" || r.header.Get("Allow") != "POST" {
			t.Fatalf("%s: %d %v %s", m, r.status, r.header, r.raw)
		}
	}

	// Origin: the service's own passes (configured ones: TestMCPOriginAllowList),
	// any other gets 403 before authentication.
	if r := mcpPost(t, base, key, map[string]string{"Origin": "https://evil.example"}, toolsCallBalance); r.status != 403 || problemOf(t, r).Code != "forbidden" {
		t.Fatalf("foreign origin: %d %s", r.status, r.raw)
	}
	if r := mcpPost(t, base, "", map[string]string{"Origin": "http://evil.example"}, toolsCallBalance); r.status != 403 {
		t.Fatalf("foreign origin without key: %d %s", r.status, r.raw)
	}
	own := "http://api.test" // BROLL_PUBLIC_URL of the test config
	if r := mcpPost(t, base, key, map[string]string{"Origin": own}, toolsCallBalance); r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != own {
		t.Fatalf("own origin: %d %v", r.status, r.header)
	}
	pre := mcpSend(t, "OPTIONS", base, "", map[string]string{"Origin": own, "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "authorization, content-type"}, "")
	if pre.status != 204 || pre.header.Get("Access-Control-Allow-Origin") != own ||
		!strings.Contains(strings.ToLower(pre.header.Get("Access-Control-Allow-Headers")), "authorization") {
		t.Fatalf("preflight: %d %v", pre.status, pre.header)
	}

	// The transport's own refusals are problem+json like the rest of the API;
	// JSON-RPC errors stay JSON-RPC.
	if r := mcpPost(t, base, key, map[string]string{"Content-Type": "text/plain"}, toolsCallBalance); r.status < 400 || r.status >= 500 || problemOf(t, r).Code != "invalid_request" {
		t.Fatalf("text/plain body: %d %s", r.status, r.raw)
	}
	if r := mcpPost(t, base, key, map[string]string{"Accept": "application/json"}, toolsCallBalance); r.status != 400 || problemOf(t, r).Code != "invalid_request" {
		t.Fatalf("Accept without event-stream: %d %s", r.status, r.raw)
	}
	if r := mcpPost(t, base, key, nil, "["+toolsCallBalance+","+toolsCallBalance+"]"); r.status != 400 || problemOf(t, r).Code != "invalid_request" {
		t.Fatalf("batch: %d %s", r.status, r.raw)
	}
	r = mcpPost(t, base, key, nil, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"no_such_tool"}}`)
	if expect[rpcResponse](t, r, 200).Error == nil {
		t.Fatalf("unknown tool: %s", r.raw)
	}

	// The SDK's per-session Info lines would be three per stateless call.
	if logs := e.logs.String(); strings.Contains(logs, "session connected") || strings.Contains(logs, "server connecting") {
		t.Errorf("per-request SDK logging:\n%s", logs)
	}
}

func TestMCPOriginAllowList(t *testing.T) {
	t.Parallel()
	p := newOriginPolicy("https://API.example.com", []string{"http://localhost:6274"})
	for origin, want := range map[string]bool{
		"https://api.example.com": true, "HTTP://LOCALHOST:6274": true, "http://localhost:6275": false,
		"https://api.example.com.evil.io": false, "null": false,
	} {
		if p.allows(origin) != want {
			t.Errorf("%s: allowed %v", origin, !want)
		}
	}
	if !newOriginPolicy("", []string{"*"}).allows("https://anything.example") {
		t.Error(`"*" does not allow every origin`)
	}
}

// TestMCPRateLimit checks that MCP calls share the key's REST allowance and
// that a refusal is an HTTP 429 before any JSON-RPC.
func TestMCPRateLimit(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{perMinute: 4})
	base := e.serveLoopback(t)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	key := acct.CustomerKey(t, e.pool, "alice").Secret

	// initialize and notifications/initialized spend two; the GET probe
	// for an SSE stream is answered before authentication and spends none.
	cs := mcpMustConnect(t, base, key)
	if res, err := cs.CallTool(t.Context(), mcpCall("get_balance")); err != nil || res.IsError {
		t.Fatalf("call within the limit: %v %v", res, err)
	}
	if r := e.do(t, 0, "GET", "/api/v1/balance", key, nil); r.status != 200 || r.header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("REST call within the shared limit: %d %v", r.status, r.header)
	}
	r := mcpPost(t, base, key, nil, toolsCallBalance)
	if r.status != 429 || problemOf(t, r).Code != "rate_limited" || r.header.Get("Retry-After") == "" || r.header.Get("X-RateLimit-Limit") != "4" {
		t.Fatalf("past the limit: %d %v %s", r.status, r.header, r.raw)
	}
	if _, err := cs.CallTool(t.Context(), mcpCall("get_balance")); err == nil || !strings.Contains(err.Error(), "Too Many Requests") {
		t.Fatalf("client past the limit: %v", err)
	}
}
