package api

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
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
	if bal := decode[brollclient.Balance](t, response{raw: result.StructuredContent}); bal.Balance != 7 {
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

// TestMCPRateLimit checks that MCP calls share the key's REST allowance,
// and that a refused call reaches an MCP client with the code and the wait:
// the official SDK clients drop the body of an HTTP 429, so a JSON-RPC
// request is answered in band (a tool error result, or a JSON-RPC error
// for other methods) with Retry-After on the HTTP response; only a
// notification, which has no response to carry it, gets the HTTP 429.
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

	// A plain HTTP client still finds Retry-After and the X-RateLimit
	// headers; the JSON-RPC answer carries the same figures.
	r := mcpPost(t, base, key, nil, toolsCallBalance)
	retry, err := strconv.Atoi(r.header.Get("Retry-After"))
	if r.status != 200 || err != nil || retry < 1 || r.header.Get("X-RateLimit-Limit") != "4" || r.header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("tools/call past the limit: %d %v %s", r.status, r.header, r.raw)
	}
	res := expect[rpcResponse](t, r, 200).Result
	if res == nil || !res.IsError {
		t.Fatalf("tools/call past the limit: not an error result: %s", r.raw)
	}
	te := errorOf[toolError](t, response{status: 200, raw: res.StructuredContent})
	if te.Code != "rate_limited" || te.Retryable == nil || !*te.Retryable || deref(te.RetryAfterSeconds) != retry {
		t.Fatalf("tools/call past the limit: %s", res.StructuredContent)
	}

	// Other requests get a JSON-RPC error with the same data.
	r = mcpPost(t, base, key, nil, `{"jsonrpc":"2.0","id":"l","method":"tools/list"}`)
	if rpc := expect[rpcResponse](t, r, 200); rpc.Error == nil || !strings.Contains(rpc.Error.Message, "rate_limited") ||
		errorOf[brollclient.Problem](t, response{raw: mustJSON(t, rpc.Error.Data)}).RetryAfterSeconds == nil || r.header.Get("Retry-After") == "" {
		t.Fatalf("tools/list past the limit: %v %s", r.header, r.raw)
	}

	// A notification has no response: HTTP 429 with the problem.
	r = mcpPost(t, base, key, nil, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if r.status != 429 || problemOf(t, r).Code != "rate_limited" || r.header.Get("Retry-After") == "" {
		t.Fatalf("notification past the limit: %d %v %s", r.status, r.header, r.raw)
	}

	// The official Go SDK client: the tool result carries the code and
	// the seconds to wait, in structuredContent and in its text.
	out, err := cs.CallTool(t.Context(), mcpCall("get_balance"))
	if err != nil || !out.IsError {
		t.Fatalf("client past the limit: %v %v", out, err)
	}
	raw := mustJSON(t, out.StructuredContent)
	te = errorOf[toolError](t, response{raw: raw})
	secs := deref(te.RetryAfterSeconds)
	if te.Code != "rate_limited" || secs < 1 || !strings.Contains(resultText(out, 0), fmt.Sprintf("retry in %d s", secs)) {
		t.Fatalf("client past the limit: %s %q", raw, resultText(out, 0))
	}
	// ... and a refused connect or list names them in its error.
	if _, err := mcpConnect(t, base, key, legacyProtocol); err == nil || !strings.Contains(err.Error(), "rate_limited") || !strings.Contains(err.Error(), "retry in") {
		t.Fatalf("connect past the limit: %v", err)
	}
	if _, err := cs.ListTools(t.Context(), nil); err == nil || !strings.Contains(err.Error(), "retry in") {
		t.Fatalf("tools/list past the limit: %v", err)
	}
}

// TestMCPRequestsPerConnection counts what connecting costs against the
// rate limit, as docs/mcp.md states it: two requests with the protocol
// versions of today's assistants (initialize, notifications/initialized),
// one with the SDK's newest (server/discover), then one per call.
func TestMCPRequestsPerConnection(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{perMinute: 30})
	base := e.serveLoopback(t)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	for version, cost := range map[string]int{legacyProtocol: 2, "2025-11-25": 2, "": 1} {
		key := acct.CustomerKey(t, e.pool, "k"+version).Secret
		cs, err := mcpConnect(t, base, key, version)
		if err != nil {
			t.Fatalf("%q: connect: %v", version, err)
		}
		if _, err := cs.CallTool(t.Context(), mcpCall("get_balance")); err != nil {
			t.Fatal(err)
		}
		// The remaining count after connect, one call and this request.
		r := mcpPost(t, base, key, nil, toolsCallBalance)
		if got := r.header.Get("X-RateLimit-Remaining"); got != strconv.Itoa(30-cost-2) {
			t.Errorf("protocol %q (negotiated %s): %s remaining after connect and two calls, want connect to cost %d",
				version, cs.InitializeResult().ProtocolVersion, got, cost)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
