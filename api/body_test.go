package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"broll/billing/billingtest"
)

// gzipped compresses body as a client sending Content-Encoding: gzip would.
func gzipped(t *testing.T, body []byte) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(body); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestCompressedBodies: on every surface that reads a body, a gzip body
// within the limit is answered exactly as the same body sent plain, one that
// inflates past BROLL_MAX_BODY_BYTES is 413 (the limit counts decoded
// bytes), and any other encoding is 415, before the handler runs.
func TestCompressedBodies(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	n := e.legacyNode(t, newTestClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))) // before the v0 sunset
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 5000})
	vids := billingtest.Videos(t, e.pool, 1, "easy")
	ops, err := e.ctl.Tenancy.CreateOpsKey(context.Background(), "content team")
	if err != nil {
		t.Fatal(err)
	}
	asJSON := func(v any) []byte { raw, _ := json.Marshal(v); return raw }
	const formToken = "0123456789abcdef0123456789abcdef"
	form := url.Values{"csrf_token": {formToken}, "email": {"nobody@example.com"}, "password": {"not the password"}}

	surfaces := []struct {
		name, path string
		header     map[string]string
		body       []byte
		// want is the status the plain body gets; the gzip one must match.
		want int
		// html: the dashboard answers errors with pages, not problem+json.
		html bool
	}{
		{"REST purchase", "/api/v1/broll/purchase", bearerHeader(acct.RootKey.Secret),
			asJSON(map[string]any{"video_ids": vids, "dry_run": true}), 200, false},
		{"REST keys", "/api/v1/keys", bearerHeader(acct.RootKey.Secret),
			asJSON(map[string]any{"customer_label": "from a gzip body"}), 201, false},
		{"MCP", mcpPath, map[string]string{"Authorization": "Bearer " + acct.RootKey.Secret,
			"Accept": "application/json, text/event-stream"}, []byte(toolsCallBalance), 200, false},
		// An import of no clips at all: valid, so it gets past decoding.
		{"ops import", "/api/ops/v1/videos", bearerHeader(ops.Secret), []byte(`[]`), 400, false},
		{"legacy v0 purchase", "/api/external/broll/purchase", map[string]string{"X-API-Key": testLegacySecret},
			asJSON(map[string]any{"source": acct.Source, "video_ids": vids}), 0, false},
		// The form token only reaches the CSRF check when the body was
		// inflated: 401 (unknown user) rather than 403 (forged form).
		{"dashboard sign-in form", "/dashboard/sign-in", map[string]string{
			"Content-Type": "application/x-www-form-urlencoded", "Cookie": "broll_dashboard_form=" + formToken},
			[]byte(form.Encode()), 401, true},
	}
	for _, s := range surfaces {
		t.Run(s.name, func(t *testing.T) {
			send := e.send
			code := func(r response) string { return string(problemOf(t, r).Code) + ": " + problemOf(t, r).Detail }
			if s.html {
				send = e.sendUnchecked
				code = func(response) string { return "" }
			}
			plain := send(t, n, "POST", s.path, s.header, string(s.body))
			if s.want != 0 && plain.status != s.want {
				t.Fatalf("plain body: %d, want %d: %s", plain.status, s.want, plain.raw)
			}
			gz := map[string]string{"Content-Encoding": "gzip"}
			for k, v := range s.header {
				gz[k] = v
			}
			r := send(t, n, "POST", s.path, gz, gzipped(t, s.body))
			if r.status != plain.status || code(r) != code(plain) {
				t.Errorf("gzip body: %d %s, plain body: %d %s", r.status, r.raw, plain.status, plain.raw)
			}

			// Padding with spaces keeps the body valid JSON or form; only
			// its decoded size is wrong.
			big := append(bytes.Repeat([]byte(" "), e.cfg.MaxBodyBytes), s.body...)
			r = send(t, n, "POST", s.path, gz, gzipped(t, big))
			if r.status != 413 || (!s.html && problemOf(t, r).Code != "payload_too_large") {
				t.Errorf("gzip over the limit: %d %s", r.status, r.raw)
			}
			legacy := strings.HasPrefix(s.path, legacyPrefix)
			if legacy {
				checkSunsetHeaders(t, "legacy 413", r)
			}

			for _, enc := range []string{"br", "deflate", "gzip, gzip", "compress"} {
				h := map[string]string{"Content-Encoding": enc}
				for k, v := range s.header {
					h[k] = v
				}
				r = send(t, n, "POST", s.path, h, string(s.body))
				if r.status != 415 || (!s.html && problemOf(t, r).Code != "unsupported_media_type") {
					t.Errorf("Content-Encoding %s: %d %s", enc, r.status, r.raw)
				}
				if legacy {
					checkSunsetHeaders(t, "legacy 415", r)
				}
			}
		})
	}

	// A body that claims gzip and is not: 400, not a 500 or a hang.
	r := e.send(t, n, "POST", "/api/v1/broll/purchase", map[string]string{"Authorization": "Bearer " + acct.RootKey.Secret,
		"Content-Encoding": "gzip"}, `{"video_ids":[]}`)
	if r.status != 400 || problemOf(t, r).Code != "invalid_request" || !strings.Contains(problemOf(t, r).Detail, "gzip") {
		t.Errorf("not gzip: %d %s", r.status, r.raw)
	}
	// A truncated stream is the same.
	whole := gzipped(t, asJSON(map[string]any{"video_ids": vids}))
	r = e.send(t, n, "POST", "/api/v1/broll/purchase", map[string]string{"Authorization": "Bearer " + acct.RootKey.Secret,
		"Content-Encoding": "gzip"}, whole[:len(whole)-6])
	if r.status != 400 || problemOf(t, r).Code != "invalid_request" {
		t.Errorf("truncated gzip: %d %s", r.status, r.raw)
	}
}
