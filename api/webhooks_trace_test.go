package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
)

// A request's W3C traceparent reaches the deliveries of the events it
// wrote: each delivery carries a traceparent with the request's trace id
// (and a span of its own), so a receiver's logs join the caller's trace. An
// event written by a request without one is delivered without one.
func TestWebhookDeliveriesContinueTheRequestsTrace(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{configure: loopbackHooks})
	a := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 100_000})
	root := a.RootKey.Secret

	var mu sync.Mutex
	got := map[string]string{} // event type -> traceparent ("" for none)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		typ := req.Header.Get("webhook-id")
		mu.Lock()
		got[typ] = req.Header.Get("traceparent")
		mu.Unlock()
	}))
	t.Cleanup(rcv.Close)
	hook := decode[brollclient.WebhookCreated](t, e.do(t, 0, "POST", "/api/v1/webhooks", root, map[string]any{
		"url": rcv.URL, "events": []string{"purchase.completed", "key.created", "key.revoked"}}))
	runDeliverer(t, e)

	const (
		keyTrace      = "4bf92f3577b34da6a3ce929d0e0e4736"
		purchaseTrace = "0af7651916cd43dd8448eb211c80319c"
	)
	withTrace := func(trace string) map[string]string {
		h := bearerHeader(root)
		h["traceparent"] = "00-" + trace + "-00f067aa0ba902b7-01"
		return h
	}
	created := decode[brollclient.KeyCreated](t, e.send(t, 0, "POST", "/api/v1/keys", withTrace(keyTrace), map[string]any{"customer_label": "traced"}))
	customer := bearerHeader(created.ApiKey)
	customer["traceparent"] = "00-" + purchaseTrace + "-b7ad6b7169203331-01"
	vids := billingtest.Videos(t, e.pool, 1, "easy")
	if r := e.send(t, 0, "POST", "/api/v1/broll/purchase", customer, map[string]any{"video_ids": vids}); r.status != 200 {
		t.Fatalf("purchase: %d %s", r.status, r.raw)
	}
	e.do(t, 0, "DELETE", "/api/v1/keys?id="+created.Details.Id.String(), root, nil) // no traceparent

	// The receiver keys what it got by event id; map them to types.
	events := map[string]string{}
	rows, err := e.pool.Query(t.Context(), `SELECT id, type FROM webhook_events WHERE account_id = $1`, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, typ string
		if err := rows.Scan(&id, &typ); err != nil {
			t.Fatal(err)
		}
		events[id] = typ
	}
	rows.Close()
	byType := func() map[string]string {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]string{}
		for id, tp := range got {
			out[events[id]] = tp
		}
		return out
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(byType()) < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	seen := byType()
	if len(seen) != 3 {
		t.Fatalf("deliveries to endpoint %s: %v, want key.created, purchase.completed and key.revoked", hook.Id, seen)
	}
	for typ, trace := range map[string]string{"key.created": keyTrace, "purchase.completed": purchaseTrace} {
		parts := strings.Split(seen[typ], "-")
		if len(parts) != 4 || parts[0] != "00" || parts[1] != trace || len(parts[2]) != 16 || parts[3] != "01" {
			t.Errorf("%s delivered with traceparent %q, want trace id %s", typ, seen[typ], trace)
		}
		if strings.Contains(seen[typ], "00f067aa0ba902b7") || strings.Contains(seen[typ], "b7ad6b7169203331") {
			t.Errorf("%s reuses the caller's span id: %q", typ, seen[typ])
		}
	}
	if seen["key.revoked"] != "" {
		t.Errorf("key.revoked, from a request without traceparent, carried %q", seen["key.revoked"])
	}
}

// An MCP purchase runs on its request's context too: the purchase.completed
// it writes keeps a traceparent of the caller's trace, as a REST purchase's
// does.
func TestMCPPurchaseEventKeepsTheTrace(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{configure: loopbackHooks})
	a := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 100_000})
	rcv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(rcv.Close)
	e.do(t, 0, "POST", "/api/v1/webhooks", a.RootKey.Secret, map[string]any{
		"url": rcv.URL, "events": []string{"purchase.completed"}})
	base := e.serveLoopback(t)
	vids := billingtest.Videos(t, e.pool, 1, "easy")

	const trace = "5e0c2b6a1f3d4c8e9a7b6c5d4e3f2a1b"
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"purchase_videos","arguments":{"video_ids":["` +
		vids[0].String() + `"]}}}`
	r := mcpPost(t, base, a.RootKey.Secret, map[string]string{"traceparent": "00-" + trace + "-00f067aa0ba902b7-01"}, call)
	if r.status != 200 || strings.Contains(string(r.raw), `"isError":true`) {
		t.Fatalf("purchase_videos: %d %s", r.status, r.raw)
	}
	var got *string
	if err := e.pool.QueryRow(t.Context(), `SELECT trace_id FROM webhook_events
		WHERE account_id = $1 AND type = 'purchase.completed'`, a.ID).Scan(&got); err != nil {
		t.Fatalf("purchase.completed: %v", err)
	}
	if got == nil || !strings.HasPrefix(*got, "00-"+trace+"-") || len(*got) != 55 {
		t.Fatalf("the MCP purchase's event keeps trace %v, want %s", got, trace)
	}
}

// A legacy (v0) purchase runs on its request's context too: the
// purchase.completed it writes keeps a traceparent of the caller's trace.
func TestLegacyPurchaseEventKeepsTheTrace(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{configure: loopbackHooks})
	n := e.legacyNode(t, newTestClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)))
	a := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 100_000, Legacy: true})
	rcv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(rcv.Close)
	e.do(t, 0, "POST", "/api/v1/webhooks", a.RootKey.Secret, map[string]any{
		"url": rcv.URL, "events": []string{"purchase.completed"}})
	vids := billingtest.Videos(t, e.pool, 1, "easy")

	const trace = "7e0c2b6a1f3d4c8e9a7b6c5d4e3f2a1c"
	h := bearerHeader(testLegacySecret)
	h["traceparent"] = "00-" + trace + "-00f067aa0ba902b7-01"
	if r := e.send(t, n, "POST", "/api/external/broll/purchase", h,
		map[string]any{"source": a.Source, "video_ids": []string{vids[0].String()}, "customer_email": "ann@example.com"}); r.status != 200 {
		t.Fatalf("legacy purchase: %d %s", r.status, r.raw)
	}
	var got *string
	if err := e.pool.QueryRow(t.Context(), `SELECT trace_id FROM webhook_events
		WHERE account_id = $1 AND type = 'purchase.completed'`, a.ID).Scan(&got); err != nil {
		t.Fatalf("purchase.completed: %v", err)
	}
	if got == nil || !strings.HasPrefix(*got, "00-"+trace+"-") {
		t.Fatalf("the legacy purchase's event keeps trace %v, want one of %s", got, trace)
	}
}
