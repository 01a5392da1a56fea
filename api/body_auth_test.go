package api

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestUnauthenticatedBodyNotRead: on every route that takes a body, a
// request with no credential or a wrong one is answered 401 as soon as its
// headers are in, whatever its body does: here the client sends part of a
// small body (under fasthttp's 8 KiB pre-read) or of a chunked one and then
// stalls, and the answer must come within a second, not after the 30 s
// read timeout. The connection is closed after the answer: the rest of the
// body was never read. A dashboard form without a session is answered
// (with the redirect to sign in) as fast.
func TestUnauthenticatedBodyNotRead(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	n := e.legacyNode(t, newTestClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))) // before the v0 sunset
	addr := strings.TrimPrefix(serveNode(t, e, n), "http://")
	unknown := "dsk_" + strings.Repeat("Q", 43)
	routes := []struct{ method, path string }{
		{"PUT", uploadsPath + "/" + uuid.NewString()},
		{"POST", uploadsPath},
		{"POST", "/api/ops/v1/videos"},
		{"POST", "/api/v1/broll/purchase"},
		{"POST", "/API/V1/broll/purchase"}, // routes match regardless of case
		{"POST", "/api/v1/keys"},
		{"PATCH", "/api/v1/keys?id=" + uuid.NewString()},
		{"POST", "/api/v1/webhooks"},
		{"POST", "/api/v1/webhooks/" + uuid.NewString() + "/test"},
		{"POST", mcpPath},
		{"POST", legacyPrefix + "/purchase"},
	}
	var wg sync.WaitGroup
	for _, r := range routes {
		for _, cred := range []string{"", "Authorization: Bearer not-a-key\r\n", "Authorization: Bearer " + unknown + "\r\n",
			"X-API-Key: " + unknown + "\r\n"} {
			for _, chunked := range []bool{false, true} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					what := fmt.Sprintf("%s %s %q chunked=%t", r.method, r.path, strings.TrimSpace(cred), chunked)
					if err := stalledRequest(addr, r.method, r.path, cred, chunked, http.StatusUnauthorized); err != nil {
						t.Errorf("%s: %v", what, err)
					}
				}()
			}
		}
	}
	wg.Wait()

	// The MCP route refuses a foreign origin and other methods first, as
	// fast; a dashboard form posted without a session is sent to sign in.
	for _, c := range []struct {
		method, path, header string
		want                 int
	}{
		{"POST", mcpPath, "Origin: https://evil.example\r\n", http.StatusForbidden},
		{"GET", mcpPath, "", http.StatusMethodNotAllowed},
		{"POST", "/dashboard/keys", "", http.StatusSeeOther},
		{"POST", "/dashboard/keys/" + uuid.NewString() + "/revoke", "Cookie: broll_dashboard=" + strings.Repeat("s", 43) + "\r\n", http.StatusSeeOther},
	} {
		if err := stalledRequest(addr, c.method, c.path, c.header, false, c.want); err != nil {
			t.Errorf("%s %s %q: %v", c.method, c.path, c.header, err)
		}
	}
}

// stalledRequest sends a request's headers and the start of its body,
// then stalls; it wants the status want within a second and the
// connection closed.
func stalledRequest(addr, method, path, header string, chunked bool, want int) error {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	start := `{"video_ids":["` + strings.Repeat("0", 80)
	framing := "Content-Length: 4000\r\n"
	if chunked {
		framing = "Transfer-Encoding: chunked\r\n"
		start = fmt.Sprintf("%x\r\n%s", 4000, start)
	}
	fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: api.test\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n%s%s\r\n%s",
		method, path, header, framing, start)
	began := time.Now()
	_ = conn.SetReadDeadline(began.Add(time.Second))
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		return fmt.Errorf("no answer within a second: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != want {
		return fmt.Errorf("status %d after %s, want %d", res.StatusCode, time.Since(began), want)
	}
	if !res.Close {
		return fmt.Errorf("%d without Connection: close: the unread body would be read as the next request", want)
	}
	return nil
}

// TestRefusedBodyAnswerReachesAWritingClient: a keyless request whose body
// the client is still writing when the 401 (or a 413 announced from the
// headers) is sent must receive that answer, not a reset connection: the
// server drains what is still arriving for a moment before it closes.
func TestRefusedBodyAnswerReachesAWritingClient(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	base := serveNode(t, e, 0)
	body := `{"video_ids":["` + strings.Repeat("a", 900*1024) + `"]}`
	for i := range 20 {
		req, err := http.NewRequest(http.MethodPost, base+"/api/v1/broll/purchase", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("request %d: no answer: %v", i, err)
		}
		_ = res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("request %d: status %d, want 401", i, res.StatusCode)
		}
	}
}
