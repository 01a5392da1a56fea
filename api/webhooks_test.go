package api

import (
	"encoding/json"
	"testing"
	"time"

	"broll/billing/billingtest"
)

type webhookCreated struct {
	ID      string   `json:"id"`
	URL     string   `json:"url"`
	Events  []string `json:"events"`
	Enabled bool     `json:"enabled"`
	Secret  string   `json:"secret"`
}

// /api/v1/webhooks over the real router, each exchange checked against the
// OpenAPI document: root keys manage endpoints, customer keys cannot, the
// secret is shown once, and non-public addresses are refused with 400.
func TestWebhooksOverHTTP(t *testing.T) {
	t.Parallel()
	_, router := loadOpenAPI(t)
	e := setup(t, envOpts{})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 1000})
	other := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	root := bearerHeader(acct.RootKey.Secret)
	cust := bearerHeader(acct.CustomerKey(t, e.pool, "customer").Secret)
	check := func(want int, name, method, path string, header map[string]string, body any) exchange {
		t.Helper()
		x := e.exchange(t, 0, name, method, path, header, body)
		validate(t, router, x, want)
		return x
	}

	x := check(201, "create", "POST", "/api/v1/webhooks", root, map[string]any{
		"url": "https://hooks.example.com/broll", "events": []string{"purchase.completed", "balance.low"}, "description": "billing"})
	var created webhookCreated
	if err := json.Unmarshal(x.raw, &created); err != nil || len(created.Secret) < 20 || !created.Enabled {
		t.Fatalf("created: %s", x.raw)
	}
	check(400, "metadata address", "POST", "/api/v1/webhooks", root, map[string]any{"url": "https://169.254.169.254/", "events": []string{"key.created"}})
	check(400, "private address", "POST", "/api/v1/webhooks", root, map[string]any{"url": "https://10.0.0.1/hook", "events": []string{"key.created"}})
	check(400, "plain http", "POST", "/api/v1/webhooks", root, map[string]any{"url": "http://hooks.example.com/", "events": []string{"key.created"}})
	check(400, "unknown event", "POST", "/api/v1/webhooks", root, map[string]any{"url": "https://hooks.example.com/", "events": []string{"key.exploded"}})
	check(400, "no events", "POST", "/api/v1/webhooks", root, map[string]any{"url": "https://hooks.example.com/"})
	check(403, "customer key", "POST", "/api/v1/webhooks", cust, map[string]any{"url": "https://hooks.example.com/", "events": []string{"key.created"}})
	check(403, "customer key lists", "GET", "/api/v1/webhooks", cust, nil)

	list := check(200, "list", "GET", "/api/v1/webhooks", root, nil)
	var l struct {
		Webhooks []map[string]any `json:"webhooks"`
	}
	if err := json.Unmarshal(list.raw, &l); err != nil || len(l.Webhooks) != 1 || l.Webhooks[0]["secret"] != nil {
		t.Fatalf("list (the secret must not be shown again): %s", list.raw)
	}
	otherList := check(200, "another account's list", "GET", "/api/v1/webhooks", bearerHeader(other.RootKey.Secret), nil)
	if err := json.Unmarshal(otherList.raw, &l); err != nil || len(l.Webhooks) != 0 {
		t.Fatalf("another account sees: %s", otherList.raw)
	}
	base := "/api/v1/webhooks/" + created.ID
	check(404, "another account's endpoint", "GET", base+"/deliveries", bearerHeader(other.RootKey.Secret), nil)
	ping := check(202, "test ping", "POST", base+"/test", root, nil)
	var p struct {
		EventID string `json:"event_id"`
	}
	if err := json.Unmarshal(ping.raw, &p); err != nil || p.EventID == "" {
		t.Fatalf("ping: %s", ping.raw)
	}
	check(200, "deliveries", "GET", base+"/deliveries?limit=10", root, nil)
	check(400, "deliveries, bad limit", "GET", base+"/deliveries?limit=0", root, nil)
	check(400, "bad id", "GET", "/api/v1/webhooks/nope/deliveries", root, nil)
	rot := check(200, "rotate", "POST", base+"/rotate", root, map[string]any{"expire_in_seconds": 3600})
	var r struct {
		Secret        string    `json:"secret"`
		Expires       time.Time `json:"previous_secrets_expire_at"`
		ActiveSecrets int       `json:"active_secrets"`
	}
	if err := json.Unmarshal(rot.raw, &r); err != nil || r.Secret == created.Secret || r.ActiveSecrets != 2 ||
		r.Expires.Before(time.Now().Add(59*time.Minute)) {
		t.Fatalf("rotate: %s", rot.raw)
	}
	check(200, "rotate with the default overlap", "POST", base+"/rotate", root, nil)
	check(400, "rotate, overlap too long", "POST", base+"/rotate", root, map[string]any{"expire_in_seconds": 9999999})
	check(200, "enable", "POST", base+"/enable", root, nil)
	check(400, "delete without id", "DELETE", "/api/v1/webhooks", root, nil)
	check(404, "delete another account's", "DELETE", "/api/v1/webhooks?id="+created.ID, bearerHeader(other.RootKey.Secret), nil)
	check(200, "delete", "DELETE", "/api/v1/webhooks?id="+created.ID, root, nil)
	check(404, "delete again", "DELETE", "/api/v1/webhooks?id="+created.ID, root, nil)
}
