package api

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"broll/clients/go/brollclient"
)

// TestUnparsableRequestHeadersGetAProblem: a request the HTTP parser
// refuses before any route sees it (a control character in a header value,
// an HTTP/1.1 request without Host) is answered over the wire with a 4xx
// problem+json like every other bad input, not a bare text line.
func TestUnparsableRequestHeadersGetAProblem(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	base := serveNode(t, e, 0)
	for name, head := range map[string]string{
		"NUL in a header value":  "POST /api/v1/broll/purchase HTTP/1.1\r\nHost: x\r\nIdempotency-Key: a\x00b\r\nContent-Length: 2\r\n\r\n{}",
		"CR alone in a value":    "GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nX-Note: a\rb\r\n\r\n",
		"HTTP/1.1 without Host":  "GET /api/v1/balance HTTP/1.1\r\n\r\n",
		"space before the colon": "GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nX-Note : a\r\n\r\n",
	} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(conn, head); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Errorf("%s: no answer: %v", name, err)
			conn.Close()
			continue
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		conn.Close()
		var p brollclient.Problem
		if res.StatusCode < 400 || res.StatusCode >= 500 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/problem+json") ||
			json.Unmarshal(raw, &p) != nil || p.Status != res.StatusCode || p.Code == "" || p.Detail == "" {
			t.Errorf("%s: %d %q %s", name, res.StatusCode, res.Header.Get("Content-Type"), raw)
		}
	}
}
