package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"broll/billing/billingtest"
	"broll/internal/telemetry"
	"broll/wiring"
)

// TestNothingPrivateInSpans runs the money and hostile cases (purchases,
// quotes, refusals, bad bodies, wrong keys, licences, downloads, legacy
// purchases by email, MCP tool calls, webhook endpoints) on nodes that
// trace every request, their statements and their Redis calls into
// memory, and searches every span's name, attributes, events, links and
// status for what the test itself handed over: keys, secrets, signed
// links, emails, licensee names, bodies and statement arguments.
func TestNothingPrivateInSpans(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tp, err := wiring.NewTelemetry(context.Background(), telemetry.ProviderOptions{ServiceName: "broll-api", Exporter: exp})
	if err != nil {
		t.Fatal(err)
	}
	e := setup(t, envOpts{telemetry: tp, configure: loopbackHooks})
	clock := newTestClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)) // before v0's sunset
	legacy := e.legacyNode(t, clock)
	var secrets []string
	keep := func(s ...string) { secrets = append(secrets, s...) }

	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 100_000, Legacy: true})
	buyer := acct.CustomerKey(t, e.pool, "buyer")
	keep(acct.RootKey.Secret, buyer.Secret, testLegacySecret)
	vids := billingtest.Videos(t, e.pool, 3, "easy")
	e.putMedia(t, vids[0], []byte(strings.Repeat("frame", 200)))

	// A key with a licensee name, made over HTTP.
	const licensee = "Privately Named Licensee GmbH"
	keep(licensee)
	r := e.do(t, 0, "POST", "/api/v1/keys", acct.RootKey.Secret, map[string]any{
		"customer_label": "named", "licensee_name": licensee})
	var created struct {
		Secret string `json:"api_key"`
	}
	_ = json.Unmarshal(r.raw, &created)
	if r.status != 201 || created.Secret == "" {
		t.Fatalf("key: %d %s", r.status, r.raw)
	}
	keep(created.Secret)

	// A purchase, its licence and its download through the signed link.
	res := e.buy(t, 0, created.Secret, vids[0])
	link := downloadLink(res.Purchases, 0)
	u, err := url.Parse(link)
	if err != nil || link == "" {
		t.Fatalf("download link %q: %v", link, err)
	}
	keep(link, u.RawQuery, u.Query().Get("sig"))
	if r := e.do(t, 0, "GET", u.RequestURI(), "", nil); r.status != 200 && r.status != 302 {
		t.Fatalf("download: %d %s", r.status, r.raw)
	}
	if l := res.Purchases[0].License; l != nil {
		e.do(t, 0, "GET", "/api/v1/licenses/"+l.Id, created.Secret, nil)
		if v, err := url.Parse(l.VerifyUrl); err == nil {
			e.sendUnchecked(t, 0, "GET", v.RequestURI(), nil, nil)
		}
	}

	// A quote, a refusal for money and one for a wrong expected total.
	e.do(t, 0, "POST", "/api/v1/broll/purchase", buyer.Secret, map[string]any{"video_ids": vids[1:2], "dry_run": true})
	e.do(t, 0, "POST", "/api/v1/broll/purchase", buyer.Secret, map[string]any{"video_ids": vids[1:2], "expected_total": 1})
	// Hostile bodies and keys.
	const bodySecret = "body-secret-5f1d9c"
	keep(bodySecret)
	e.send(t, 0, "POST", "/api/v1/broll/purchase", bearerHeader(buyer.Secret), `{"video_ids":["`+bodySecret+`"]}`)
	e.send(t, 0, "POST", "/api/v1/broll/purchase", bearerHeader(buyer.Secret), `{"video_ids": [`+bodySecret)
	wrong := "dsk_" + strings.Repeat("x", 43)
	keep(wrong)
	e.do(t, 0, "GET", "/api/v1/balance", wrong, nil)
	e.send(t, 0, "GET", "/api/v1/balance", map[string]string{"X-API-Key": wrong}, nil)
	e.do(t, 0, "GET", "/api/v1/broll/"+bodySecret, buyer.Secret, nil)
	e.do(t, 0, "GET", "/api/v1/broll?semantic_search="+url.QueryEscape(bodySecret), buyer.Secret, nil)

	// A webhook endpoint whose URL carries a token; its signing secret.
	hookURL := "http://127.0.0.1:9/hook?token=hook-token-77aa"
	keep(hookURL, "hook-token-77aa")
	r = e.do(t, 0, "POST", "/api/v1/webhooks", acct.RootKey.Secret, map[string]any{"url": hookURL, "events": []string{"purchase.completed"}})
	var hook struct {
		Secret string `json:"secret"`
	}
	if err := json.Unmarshal(r.raw, &hook); err != nil || hook.Secret == "" {
		t.Fatalf("webhook: %d %s", r.status, r.raw)
	}
	keep(hook.Secret)

	// A legacy purchase names its customer by email.
	const email = "private.customer@example.com"
	keep(email)
	if r := e.send(t, legacy, "POST", "/api/external/broll/purchase", bearerHeader(testLegacySecret),
		map[string]any{"source": acct.Source, "video_ids": []string{vids[2].String()}, "customer_email": email}); r.status != 200 {
		t.Fatalf("legacy purchase: %d %s", r.status, r.raw)
	}

	// MCP: a purchase and a refused call.
	base := e.serveLoopback(t)
	mcpPost(t, base, buyer.Secret, nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"purchase_videos","arguments":{"video_ids":["`+
		vids[1].String()+`"]}}}`)
	mcpPost(t, base, buyer.Secret, nil, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_videos","arguments":{"query":"`+bodySecret+`"}}}`)

	spans := exp.GetSpans()
	if len(spans) < 50 {
		t.Fatalf("%d spans: the nodes did not trace", len(spans))
	}
	for _, leak := range privateIn(spans.Snapshots(), secrets) {
		t.Error(leak)
	}
}

// privateIn lists what of secrets, or of the shapes of private values (a
// key, a bearer token, a link signature, an email address), the spans
// hold anywhere: name, attributes, events, links, status or resource.
func privateIn(spans []sdktrace.ReadOnlySpan, secrets []string) []string {
	var leaks []string
	check := func(span, where, value string) {
		for _, s := range secrets {
			if s != "" && strings.Contains(value, s) {
				leaks = append(leaks, fmt.Sprintf("span %q %s holds %q", span, where, s))
			}
		}
		for _, pattern := range []string{"dsk_", "Bearer", "sig=", "@"} {
			if strings.Contains(value, pattern) {
				leaks = append(leaks, fmt.Sprintf("span %q %s holds %q: %q", span, where, pattern, value))
			}
		}
	}
	attrs := func(span, where string, kvs []attribute.KeyValue) {
		for _, kv := range kvs {
			check(span, where+" "+string(kv.Key), kv.Value.String())
		}
	}
	for _, s := range spans {
		name := s.Name()
		check(name, "name", name)
		attrs(name, "attribute", s.Attributes())
		attrs(name, "resource", s.Resource().Attributes())
		for _, ev := range s.Events() {
			check(name, "event", ev.Name)
			attrs(name, "event "+ev.Name, ev.Attributes)
		}
		for _, l := range s.Links() {
			attrs(name, "link", l.Attributes)
		}
		check(name, "status", s.Status().Description)
	}
	return leaks
}

// The search finds a planted value wherever a span holds it.
func TestPrivateInFindsALeak(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tp, err := wiring.NewTelemetry(context.Background(), telemetry.ProviderOptions{Exporter: exp})
	if err != nil {
		t.Fatal(err)
	}
	secret := uuid.NewString()
	for _, plant := range []func(ctx context.Context){
		func(ctx context.Context) {
			_, s := tp.Tracer("t").Start(ctx, "a", traceAttr("k", "x"+secret))
			s.End()
		},
		func(ctx context.Context) {
			_, s := tp.Tracer("t").Start(ctx, "b")
			s.AddEvent("e", traceAttr("body", `{"email":"a@b.example"}`))
			s.End()
		},
		func(ctx context.Context) {
			_, s := tp.Tracer("t").Start(ctx, "GET /x?sig=abc")
			s.End()
		},
	} {
		exp.Reset()
		plant(context.Background())
		if leaks := privateIn(exp.GetSpans().Snapshots(), []string{secret}); len(leaks) == 0 {
			t.Errorf("no leak found in %v", exp.GetSpans().Snapshots()[0].Name())
		}
	}
}

func traceAttr(k, v string) trace.SpanStartEventOption {
	return trace.WithAttributes(attribute.String(k, v))
}
