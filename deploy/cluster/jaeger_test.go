package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/embed/embedtest"
	"broll/internal/testkit"
	"broll/wiring/wiringtest"
)

// TestTracesInJaeger runs two API nodes and a worker exporting their spans
// to a real Jaeger, and reads back through Jaeger's query API that an ops
// import and a purchase are each one trace, whole across the processes:
// the import's request, the outbox relay, the worker's probe and embedding
// and the clips.embedded delivery; the purchase's request, its statements,
// its batch, the licence stamp on the worker and the purchase.completed
// delivery.
func TestTracesInJaeger(t *testing.T) {
	t.Parallel()
	pool, dbURL := testkit.NewPool(t)
	rds := testkit.Redis(t)
	ollama := embedtest.NewOllama(t, embedtest.Options{})
	j := startJaeger(t)
	imports := t.TempDir()
	env := with(with(sharedEnv(t, dbURL, rds, ollama.URL), j.env()), map[string]string{
		"BROLL_IMPORT_DIR": imports, "BROLL_WEBHOOK_ALLOW_HOSTS": "127.0.0.1", "BROLL_WEBHOOK_POLL_INTERVAL": "100ms"})
	nodes := []node{startAPI(t, env), startAPI(t, env)}
	w := startWorker(t, env)

	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100_000})
	buyer := acct.CustomerKey(t, pool, "buyer")
	ops, err := wiringtest.Over(t, pool).Tenancy.CreateOpsKey(context.Background(), "content team")
	if err != nil {
		t.Fatal(err)
	}

	// The receiver records the traceparent each event type came with.
	var mu sync.Mutex
	delivered := map[string]string{}
	rcv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		var typ string
		if raw := make([]byte, 4096); true {
			n, _ := r.Body.Read(raw)
			for _, t := range []string{"clips.embedded", "purchase.completed"} {
				if strings.Contains(string(raw[:n]), `"type":"`+t+`"`) {
					typ = t
				}
			}
		}
		mu.Lock()
		delivered[typ] = r.Header.Get("traceparent")
		mu.Unlock()
	}))
	t.Cleanup(rcv.Close)
	if r := call(t, nodes[0].url, "POST", "/api/v1/webhooks", acct.RootKey.Secret, map[string]any{
		"url": rcv.URL, "events": []string{"clips.embedded", "purchase.completed"}}); r.status != 201 && r.status != 200 {
		t.Fatalf("webhook endpoint: %d %s", r.status, r.raw)
	}
	deliveredIn := func(typ, trace string) func() error {
		return func() error {
			mu.Lock()
			defer mu.Unlock()
			if got := delivered[typ]; !strings.HasPrefix(got, "00-"+trace+"-") {
				return fmt.Errorf("%s delivered with traceparent %q, want one of trace %s", typ, got, trace)
			}
			return nil
		}
	}

	// The import: one clip, its file probed and embedded by the worker.
	raw, err := os.ReadFile(testkit.RenderVideo(t, 64, 36, 1))
	if err != nil {
		t.Fatal(err)
	}
	testkit.WriteFile(t, imports, "clip.mp4", raw)
	video := uuid.New()
	importTrace := newTraceID(t)
	r, err := tryCallWith(nodes[0].url, "POST", "/api/ops/v1/videos", ops.Secret, []map[string]any{{
		"id": video, "title": "Woman waving at the camera", "emotion": "happy", "gender": "female",
		"difficulty": "easy", "media_file": filepath.Join(imports, "clip.mp4")}},
		map[string]string{"traceparent": "00-" + importTrace + "-00f067aa0ba902b7-01"})
	if err != nil || r.status != 200 {
		t.Fatalf("import: %v %d %s", err, r.status, r.raw)
	}
	eventually(t, time.Minute, "clips.embedded delivered", deliveredIn("clips.embedded", importTrace))
	wantTrace(t, j, importTrace, []wantSpan{
		{service: "broll-api", name: "POST /api/ops/v1/videos", tags: map[string]any{"http.response.status_code": 200}},
		{service: "broll-api", name: "outbox relay"},
		{service: "broll-worker", name: "task media:clips"},
		{service: "broll-worker", name: "probe"},
		{service: "broll-worker", name: "embed"},
		{service: "broll-worker", tags: map[string]any{"otel.scope.name": "go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"}},
		{service: "broll-worker", name: "webhook delivery", tags: map[string]any{"webhook.event_type": "clips.embedded"}},
	})

	// The purchase of that clip, on the other node.
	purchaseTrace := newTraceID(t)
	r, err = tryCallWith(nodes[1].url, "POST", "/api/v1/broll/purchase", buyer.Secret,
		map[string]any{"video_ids": []uuid.UUID{video}},
		map[string]string{"traceparent": "00-" + purchaseTrace + "-b7ad6b7169203331-01"})
	if err != nil || r.status != 200 {
		t.Fatalf("purchase: %v %d %s", err, r.status, r.raw)
	}
	eventually(t, time.Minute, "purchase.completed delivered", deliveredIn("purchase.completed", purchaseTrace))
	wantTrace(t, j, purchaseTrace, []wantSpan{
		{service: "broll-api", name: "POST /api/v1/broll/purchase", tags: map[string]any{"http.route": "/api/v1/broll/purchase"}},
		{service: "broll-api", name: "purchase batch"},
		{service: "broll-api", tags: map[string]any{"otel.scope.name": "github.com/exaring/otelpgx"}},
		{service: "broll-worker", name: "task license:stamp-batch"},
		{service: "broll-worker", name: "task license:stamp"},
		{service: "broll-worker", name: "stamp"},
		{service: "broll-worker", name: "webhook delivery", tags: map[string]any{"webhook.event_type": "purchase.completed"}},
	})

	if os.Getenv("BROLL_JAEGER_UI") != "" {
		photographTrace(t, j, purchaseTrace, "jaeger-purchase-trace.png",
			[]string{"POST /api/v1/broll/purchase", "purchase batch", "stamp", "webhook delivery"})
	}

	for _, p := range append(nodes, w) {
		p.stop(t)
	}
}

// wantTrace waits until Jaeger returns trace id holding every span of want.
func wantTrace(t *testing.T, j *jaeger, id string, want []wantSpan) {
	t.Helper()
	var spans []jaegerSpan
	eventually(t, 30*time.Second, "trace "+id+" whole in Jaeger", func() error {
		var err error
		if spans, err = j.trace(id); err != nil {
			return err
		}
		if m := missing(spans, want); len(m) > 0 {
			return fmt.Errorf("missing %v among:\n%s", m, spanNames(spans))
		}
		return nil
	})
}

// newTraceID is a random W3C trace id.
func newTraceID(t *testing.T) string {
	t.Helper()
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}
