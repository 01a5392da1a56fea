package api

import (
	"testing"
	"time"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
)

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
	check := func(want int, name, method, path string, header map[string]string, body any) response {
		t.Helper()
		x := e.exchange(t, 0, name, method, path, header, body)
		validate(t, router, x, want)
		return x.response
	}

	created := decode[brollclient.WebhookCreated](t, check(201, "create", "POST", "/api/v1/webhooks", root, map[string]any{
		"url": "https://hooks.example.com/broll", "events": []string{"purchase.completed", "balance.low"}, "description": "billing"}))
	if len(created.Secret) < 20 || !created.Enabled {
		t.Fatalf("created: %+v", created)
	}
	check(400, "metadata address", "POST", "/api/v1/webhooks", root, map[string]any{"url": "https://169.254.169.254/", "events": []string{"key.created"}})
	check(400, "private address", "POST", "/api/v1/webhooks", root, map[string]any{"url": "https://10.0.0.1/hook", "events": []string{"key.created"}})
	check(400, "plain http", "POST", "/api/v1/webhooks", root, map[string]any{"url": "http://hooks.example.com/", "events": []string{"key.created"}})
	check(400, "unknown event", "POST", "/api/v1/webhooks", root, map[string]any{"url": "https://hooks.example.com/", "events": []string{"key.exploded"}})
	check(400, "no events", "POST", "/api/v1/webhooks", root, map[string]any{"url": "https://hooks.example.com/"})
	check(403, "customer key", "POST", "/api/v1/webhooks", cust, map[string]any{"url": "https://hooks.example.com/", "events": []string{"key.created"}})
	check(403, "customer key lists", "GET", "/api/v1/webhooks", cust, nil)

	// decode holds a listed endpoint to have no secret member at all: the
	// listed Webhook declares none.
	if l := decode[brollclient.WebhookList](t, check(200, "list", "GET", "/api/v1/webhooks", root, nil)); len(l.Webhooks) != 1 {
		t.Fatalf("list (the secret must not be shown again): %+v", l)
	}
	if l := decode[brollclient.WebhookList](t, check(200, "another account's list", "GET", "/api/v1/webhooks", bearerHeader(other.RootKey.Secret), nil)); len(l.Webhooks) != 0 {
		t.Fatalf("another account sees: %+v", l)
	}
	base := "/api/v1/webhooks/" + created.Id.String()
	check(404, "another account's endpoint", "GET", base+"/deliveries", bearerHeader(other.RootKey.Secret), nil)
	if p := decode[brollclient.WebhookPing](t, check(202, "test ping", "POST", base+"/test", root, nil)); p.EventId == "" {
		t.Fatalf("ping: %+v", p)
	}
	decode[brollclient.WebhookDeliveries](t, check(200, "deliveries", "GET", base+"/deliveries?limit=10", root, nil))
	check(400, "deliveries, bad limit", "GET", base+"/deliveries?limit=0", root, nil)
	check(400, "bad id", "GET", "/api/v1/webhooks/nope/deliveries", root, nil)
	r := decode[brollclient.WebhookRotated](t, check(200, "rotate", "POST", base+"/rotate", root, map[string]any{"expire_in_seconds": 3600}))
	if r.Secret == created.Secret || r.ActiveSecrets != 2 || r.PreviousSecretsExpireAt.Before(time.Now().Add(59*time.Minute)) {
		t.Fatalf("rotate: %+v", r)
	}
	check(200, "rotate with the default overlap", "POST", base+"/rotate", root, nil)
	check(400, "rotate, overlap too long", "POST", base+"/rotate", root, map[string]any{"expire_in_seconds": 9999999})
	check(200, "enable", "POST", base+"/enable", root, nil)
	check(400, "delete without id", "DELETE", "/api/v1/webhooks", root, nil)
	check(404, "delete another account's", "DELETE", "/api/v1/webhooks?id="+created.Id.String(), bearerHeader(other.RootKey.Secret), nil)
	check(200, "delete", "DELETE", "/api/v1/webhooks?id="+created.Id.String(), root, nil)
	check(404, "delete again", "DELETE", "/api/v1/webhooks?id="+created.Id.String(), root, nil)
}
