package api

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

var assetRef = regexp.MustCompile(`(?:src|href)="([^"]+)"`)

// TestDocsExplorerIsSelfContained: the explorer page loads nothing from
// another host, and everything it loads is served.
func TestDocsExplorerIsSelfContained(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	page := e.send(t, 0, "GET", "/docs", nil, nil)
	if page.status != 200 || !strings.HasPrefix(page.header.Get("Content-Type"), "text/html") {
		t.Fatalf("/docs: %d %q", page.status, page.header.Get("Content-Type"))
	}
	if csp := page.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Fatalf("/docs CSP %q", csp)
	}
	html := string(page.raw)
	if strings.Contains(html, "http://") || strings.Contains(html, "https://") || strings.Contains(html, "//cdn") {
		t.Fatalf("/docs references another host:\n%s", html)
	}
	refs := assetRef.FindAllStringSubmatch(html, -1)
	var scripts int
	for _, m := range refs {
		ref := m[1]
		if !strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, "//") {
			t.Errorf("/docs references %q, not a local absolute path", ref)
			continue
		}
		r := e.send(t, 0, "GET", ref, map[string]string{"Accept-Encoding": "gzip"}, nil)
		if r.status != 200 || len(r.raw) == 0 {
			t.Errorf("%s: %d", ref, r.status)
		}
		if strings.HasSuffix(ref, ".js") {
			scripts++
			if !strings.HasPrefix(r.header.Get("Content-Type"), "text/javascript") && !strings.HasPrefix(r.header.Get("Content-Type"), "application/javascript") {
				t.Errorf("%s: content type %q", ref, r.header.Get("Content-Type"))
			}
		}
	}
	if scripts != 2 || len(refs) < 5 {
		t.Fatalf("/docs references %d assets, %d scripts: %v", len(refs), scripts, refs)
	}
	// The explorer reads the document from this host.
	js := e.send(t, 0, "GET", refs[len(refs)-1][1], nil, nil)
	if !strings.Contains(string(js.raw), `url: "/api/openapi.json"`) || !strings.Contains(string(js.raw), "validatorUrl: null") {
		t.Fatalf("explorer.js: %s", js.raw)
	}
	if r := e.send(t, 0, "GET", "/docs/assets/000000000000/explorer.js", nil, nil); r.status != 404 {
		t.Fatalf("asset under a stale hash: %d", r.status)
	}
	doc := e.send(t, 0, "GET", "/api/openapi.json", nil, nil)
	var spec struct {
		OpenAPI string `json:"openapi"`
	}
	if doc.status != 200 || !strings.HasPrefix(doc.header.Get("Content-Type"), "application/json") ||
		json.Unmarshal(doc.raw, &spec) != nil || spec.OpenAPI != "3.1.0" {
		t.Fatalf("/api/openapi.json: %d %q", doc.status, doc.header.Get("Content-Type"))
	}
}

// TestDocsRenderInHeadlessChromium opens /docs in a real browser that can
// resolve no host name but 127.0.0.1, and checks that Swagger UI rendered
// the operations: proof that the explorer needs no internet access. It is
// skipped where no Chromium is installed (apt-get install chromium).
func TestDocsRenderInHeadlessChromium(t *testing.T) {
	t.Parallel()
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no Chromium on this machine (apt-get install chromium); see docs/api.md, API documentation")
	}
	e := setup(t, envOpts{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = e.nodes[0].app.Listener(ln) }()
	t.Cleanup(func() { _ = e.nodes[0].app.Shutdown() })

	// Chromium starts slowly on a loaded machine (the whole suite runs in
	// parallel): a generous budget, as this checks rendering, not speed.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--user-data-dir=" + t.TempDir(),
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
		"--virtual-time-budget=5000", "--window-size=1280,2000"}
	out, err := exec.CommandContext(ctx, browser, append(args, "--dump-dom", "http://"+ln.Addr().String()+"/docs")...).Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	dom := string(out)
	for _, want := range []string{"B-roll licensing API", "opblock-tag", "/api/v1/broll/purchase", "Legacy v0 (deprecated)", "authorize"} {
		if !strings.Contains(dom, want) {
			t.Fatalf("rendered /docs lacks %q (did Swagger UI run?); DOM starts: %.600s", want, dom)
		}
	}
	// A screenshot only when asked for: the DOM above already shows that
	// Swagger UI ran.
	shot := os.Getenv("BROLL_DOCS_SCREENSHOT")
	if shot == "" {
		return
	}
	if err := exec.CommandContext(ctx, browser, append(args, "--screenshot="+shot, "http://"+ln.Addr().String()+"/docs")...).Run(); err != nil {
		t.Fatalf("chromium screenshot: %v", err)
	}
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 10_000 {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
}
