package api

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"broll/billing/billingtest"
)

// TestBadInputRegressions pins the answers TestMalformedRequestsAtScale
// first found wrong: each was a 500 or a response outside the error
// contract.
func TestBadInputRegressions(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	clock := newTestClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	legacy := e.legacyNode(t, clock)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 1000, Legacy: true})
	key := acct.RootKey.Secret
	legacyAuth := bearerHeader(testLegacySecret)

	// Text Postgres refuses (invalid UTF-8, NUL) was a 500 from the query;
	// it is a 400 naming the parameter.
	for _, c := range []struct{ path, field string }{
		{"/api/v1/broll?model_id=%FF", "model_id"},
		{"/api/v1/broll?difficulty=laugh%00car", "difficulty"},
		{"/api/v1/broll?location=%C3%28", "location"},
		{"/api/v1/broll?search=%F4%83%B7%85%ED%A0%80", "search"},
		{"/api/v1/broll/purchases?search=laugh%ED%A0%80car", "search"},
		{"/api/v1/broll/purchases?semantic_search=%00", "semantic_search"},
	} {
		r := e.do(t, 0, "GET", c.path, key, nil)
		if r.status != http.StatusBadRequest || problemOf(t, r).Code != "invalid_request" || deref(problemOf(t, r).Field) != c.field {
			t.Errorf("GET %s: %d %s, want 400 naming %s", c.path, r.status, r.raw, c.field)
		}
	}
	r := e.do(t, 0, "POST", "/api/v1/keys", key, `{"customer_label": "a\u0000b"}`)
	if r.status != http.StatusBadRequest || deref(problemOf(t, r).Field) != "customer_label" {
		t.Errorf("label with NUL: %d %s", r.status, r.raw)
	}
	r = e.send(t, legacy, "GET", "/api/external/broll/purchases?source="+acct.Source+"&customer_email=a%00@b.co", legacyAuth, nil)
	if r.status != http.StatusBadRequest || deref(problemOf(t, r).Field) != "customer_email" {
		t.Errorf("legacy email with NUL: %d %s", r.status, r.raw)
	}
	r = e.send(t, legacy, "GET", "/api/external/broll?source=%FF", legacyAuth, nil)
	if r.status != http.StatusBadRequest && r.status != http.StatusNotFound {
		t.Errorf("legacy source of invalid UTF-8: %d %s", r.status, r.raw)
	}

	// A method fiber does not know was a plain-text 400.
	for _, m := range []string{"PROPFIND", "get", "BREW"} {
		r := e.do(t, 0, m, "/api/v1/broll", key, nil) // do checks the problem shape
		if r.status != http.StatusBadRequest || problemOf(t, r).Code != "invalid_request" {
			t.Errorf("%s: %d %s", m, r.status, r.raw)
		}
	}

	base := serveNode(t, e, 0)
	// A multipart body was parsed as a form while being read, and the
	// connection was dropped before a large one was sent in full.
	body := `{"video_ids":` + strings.Repeat("[", 200_000) + strings.Repeat("]", 200_000) + `}`
	req, err := http.NewRequest("POST", base+"/api/v1/broll/purchase", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "multipart/form-data; boundary=x")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("multipart body: %v", err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest || !bytes.Contains(raw, []byte(`"malformed JSON`)) {
		t.Errorf("multipart body: %d %s, want 400 malformed JSON", res.StatusCode, raw)
	}

	// Errors raised before the middleware (body over the limit) carried an
	// empty request_id.
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/v1/keys HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n{", e.cfg.MaxBodyBytes+1)
	big, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ = io.ReadAll(big.Body)
	big.Body.Close()
	if big.StatusCode != http.StatusRequestEntityTooLarge || big.Header.Get("X-Request-Id") == "" ||
		!bytes.Contains(raw, []byte(`"request_id":"`+big.Header.Get("X-Request-Id")+`"`)) {
		t.Errorf("body over the limit: %d %v %s, want 413 with a request id", big.StatusCode, big.Header, raw)
	}
}

// TestMCPBadTextIsClientError: the tools share the parsers, so text
// Postgres refuses is an invalid_request result there too, not internal.
func TestMCPBadTextIsClientError(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	cs := mcpMustConnect(t, e.serveLoopback(t), acct.RootKey.Secret)
	callToolErr(t, cs, "search_videos", map[string]any{"search": "laugh\x00car"}, "invalid_request")
	callToolErr(t, cs, "list_purchases", map[string]any{"search": "a\x00"}, "invalid_request")
}
