package dashboard_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"broll/webhook"
)

// The webhooks page lists every endpoint of the account, those of each of
// its root keys; one disabled after 3 days of failures is announced at the
// top and can be enabled again, and another account's endpoint cannot.
func TestWebhooksPage(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	ctx := context.Background()
	mine := e.tenant(t, "Hook Co", 1000)
	theirs := e.tenant(t, "Other Co", 1000)
	hooks := e.webhooks
	ep, err := hooks.Create(ctx, webhook.RootKey(mine.ID, mine.RootKey.ID), webhook.NewEndpoint{URL: "https://hooks.example.com/broll", Events: []string{"key.created"}})
	if err != nil {
		t.Fatal(err)
	}
	second := mine.AnotherRoot(t, e.pool, "second integration")
	if _, err := hooks.Create(ctx, webhook.RootKey(mine.ID, second.RootKey.ID), webhook.NewEndpoint{URL: "https://second.example.com/hook", Events: []string{"key.created"}}); err != nil {
		t.Fatal(err)
	}
	theirEp, err := hooks.Create(ctx, webhook.RootKey(theirs.ID, theirs.RootKey.ID), webhook.NewEndpoint{URL: "https://rival.example.com/hook", Events: []string{"key.created"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(ctx, `UPDATE webhook_endpoints SET enabled = false, disabled_at = now(),
		disabled_reason = 'disabled automatically: every delivery failed for 3 days' WHERE id = $1`, ep.ID); err != nil {
		t.Fatal(err)
	}
	b := e.signedIn(t, mine)
	p := b.get(t, "/dashboard/webhooks")
	if p.status != http.StatusOK || !strings.Contains(p.body, "hooks.example.com/broll") || !strings.Contains(p.body, "second.example.com/hook") || strings.Contains(p.body, "rival.example.com") {
		t.Fatalf("webhooks page %d: %.2000s", p.status, p.body)
	}
	if !strings.Contains(p.body, `class="notice"`) || !strings.Contains(p.body, "every delivery failed for 3 days") {
		t.Fatalf("no notice of the disabled endpoint: %.2000s", p.body)
	}
	if r := b.post(t, "/dashboard/webhooks", "/dashboard/webhooks/"+theirEp.ID.String()+"/enable", nil); r.status != http.StatusNotFound {
		t.Fatalf("enabling another account's endpoint: %d", r.status)
	}
	r := b.post(t, "/dashboard/webhooks", "/dashboard/webhooks/"+ep.ID.String()+"/enable", nil)
	if r.status != http.StatusSeeOther {
		t.Fatalf("enable: %d %.500s", r.status, r.body)
	}
	got, err := hooks.Get(ctx, webhook.AccountOwners(mine.ID), ep.ID)
	if err != nil || !got.Enabled {
		t.Fatalf("after enabling: %+v %v", got, err)
	}
}
