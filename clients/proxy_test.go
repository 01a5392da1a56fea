package clients_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// proxy is a reverse proxy in front of a live node that misbehaves on
// purpose: what it does to the nth request (1-based) is up to act. It
// records every request it sees.
type proxy struct {
	url  string
	act  func(n int, r *http.Request) action
	mu   sync.Mutex
	seen []seenRequest
}

type action int

const (
	forward     action = iota
	unavailable        // 503 with Retry-After: 1, the node never sees it
	dropAnswer         // forward, read the whole answer, then close the client's connection
)

type seenRequest struct {
	method, path, idempotencyKey string
	at                           time.Time
	status                       int    // of the node's answer; 0 when not forwarded
	replayed                     string // the answer's Idempotent-Replayed
}

func newProxy(t *testing.T, target string, act func(n int, r *http.Request) action) *proxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{act: act}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.seen = append(p.seen, seenRequest{method: r.Method, path: r.URL.Path, idempotencyKey: r.Header.Get("Idempotency-Key"), at: time.Now()})
		n := len(p.seen)
		p.mu.Unlock()
		switch p.act(n, r) {
		case unavailable:
			w.Header().Set("Content-Type", "application/problem+json")
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"type":"about:blank","title":"Unavailable","status":503,"code":"unavailable","detail":"injected by the test proxy"}`)
		case dropAnswer:
			out := r.Clone(r.Context())
			out.URL.Scheme, out.URL.Host, out.Host, out.RequestURI = u.Scheme, u.Host, u.Host, ""
			resp, err := http.DefaultTransport.RoundTrip(out)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				p.record(n, resp)
			}
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		default:
			rec := &statusRecorder{ResponseWriter: w}
			rp.ServeHTTP(rec, r)
			p.record(n, &http.Response{StatusCode: rec.status, Header: rec.Header()})
		}
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

func (p *proxy) record(n int, resp *http.Response) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen[n-1].status = resp.StatusCode
	p.seen[n-1].replayed = resp.Header.Get("Idempotent-Replayed")
}

// requests returns what the proxy saw of path (all when path is "").
func (p *proxy) requests(path string) []seenRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []seenRequest
	for _, s := range p.seen {
		if path == "" || strings.HasSuffix(s.path, path) {
			out = append(out, s)
		}
	}
	return out
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
