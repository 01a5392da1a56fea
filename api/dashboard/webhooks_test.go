package dashboard_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"broll/internal/apperr"
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

// The account's owners manage every endpoint of the account from the
// dashboard, whichever root key made it: they disable, enable again and
// delete any of them; another account's owners can do none of it. An
// endpoint of a revoked root key says so, offers no way back on (its secret
// is gone) and refuses to be enabled, but can be deleted.
func TestWebhooksManagedByTheAccountOwners(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	ctx := context.Background()
	mine := e.tenant(t, "Owner Co", 1000)
	theirs := e.tenant(t, "Stranger Co", 1000)
	second := mine.AnotherRoot(t, e.pool, "second integration")
	create := func(account, root uuid.UUID, url string) webhook.Endpoint {
		t.Helper()
		ep, err := e.webhooks.Create(ctx, webhook.RootKey(account, root), webhook.NewEndpoint{URL: url, Events: []string{"balance.low"}})
		if err != nil {
			t.Fatal(err)
		}
		return ep.Endpoint
	}
	firstEp := create(mine.ID, mine.RootKey.ID, "https://first.example.com/hook")
	secondEp := create(mine.ID, second.RootKey.ID, "https://second.example.com/hook")
	revokedRoot := mine.AnotherRoot(t, e.pool, "retired integration")
	revokedEp := create(mine.ID, revokedRoot.RootKey.ID, "https://retired.example.com/hook")
	strangerEp := create(theirs.ID, theirs.RootKey.ID, "https://stranger.example.com/hook")
	owners := webhook.AccountOwners(mine.ID)
	state := func(id uuid.UUID) (webhook.Endpoint, bool) {
		t.Helper()
		ep, err := e.webhooks.Get(ctx, owners, id)
		if apperr.CodeOf(err) == apperr.NotFound {
			return ep, false
		}
		if err != nil {
			t.Fatal(err)
		}
		return ep, true
	}

	b := e.signedIn(t, mine)
	// The retired integration's root key is revoked from the dashboard.
	rk := revokedRoot.RootKey.ID.String()
	if p := b.post(t, "/dashboard/keys/"+rk+"/revoke", "/dashboard/keys/"+rk+"/revoke", nil); p.status != http.StatusSeeOther {
		t.Fatalf("revoke the root key: %d %.500s", p.status, p.body)
	}

	// Another account's owner reaches none of this account's endpoints,
	// and nothing changes.
	stranger := e.signedIn(t, theirs)
	for _, action := range []string{"disable", "enable", "delete"} {
		for _, id := range []uuid.UUID{firstEp.ID, revokedEp.ID} {
			if p := stranger.post(t, "/dashboard/webhooks", "/dashboard/webhooks/"+id.String()+"/"+action, nil); p.status != http.StatusNotFound {
				t.Fatalf("another account's owner, %s: %d", action, p.status)
			}
		}
	}
	if ep, ok := state(firstEp.ID); !ok || !ep.Enabled {
		t.Fatalf("the endpoint after another account's attempts: %+v %v", ep, ok)
	}

	p := b.get(t, "/dashboard/webhooks")
	if p.status != http.StatusOK || strings.Contains(p.body, "stranger.example.com") {
		t.Fatalf("webhooks page %d: %.2000s", p.status, p.body)
	}
	for _, ep := range []webhook.Endpoint{firstEp, secondEp, revokedEp} {
		for _, action := range []string{"disable", "delete"} {
			if ep.ID == revokedEp.ID && action == "disable" {
				continue
			}
			if form := `action="/dashboard/webhooks/` + ep.ID.String() + `/` + action + `"`; !strings.Contains(p.body, form) {
				t.Fatalf("the page has no %s control for %s: %.3000s", action, ep.URL, p.body)
			}
		}
	}
	if strings.Contains(p.body, `action="/dashboard/webhooks/`+revokedEp.ID.String()+`/enable"`) ||
		!strings.Contains(p.body, "root key was revoked") {
		t.Fatalf("the revoked root key's endpoint offers to be enabled, or does not say why it is off: %.3000s", p.body)
	}

	// Disable and enable again another root key's endpoint.
	if r := b.post(t, "/dashboard/webhooks", "/dashboard/webhooks/"+secondEp.ID.String()+"/disable", nil); r.status != http.StatusSeeOther {
		t.Fatalf("disable: %d %.500s", r.status, r.body)
	}
	if ep, _ := state(secondEp.ID); ep.Enabled || ep.DisabledAt == nil || ep.DisabledReason == "" {
		t.Fatalf("after disabling: %+v", ep)
	}
	if r := b.post(t, "/dashboard/webhooks", "/dashboard/webhooks/"+secondEp.ID.String()+"/enable", nil); r.status != http.StatusSeeOther {
		t.Fatalf("enable: %d %.500s", r.status, r.body)
	}
	if ep, _ := state(secondEp.ID); !ep.Enabled || ep.DisabledAt != nil {
		t.Fatalf("after enabling: %+v", ep)
	}

	// The revoked root key's endpoint cannot come back, but can go.
	if r := b.post(t, "/dashboard/webhooks", "/dashboard/webhooks/"+revokedEp.ID.String()+"/enable", nil); r.status != http.StatusConflict {
		t.Fatalf("enabling the revoked root key's endpoint: %d", r.status)
	}
	if ep, _ := state(revokedEp.ID); ep.Enabled {
		t.Fatalf("the revoked root key's endpoint was enabled: %+v", ep)
	}
	for _, id := range []uuid.UUID{revokedEp.ID, firstEp.ID} {
		if r := b.post(t, "/dashboard/webhooks", "/dashboard/webhooks/"+id.String()+"/delete", nil); r.status != http.StatusSeeOther {
			t.Fatalf("delete: %d %.500s", r.status, r.body)
		}
		if _, ok := state(id); ok {
			t.Fatalf("endpoint %s still there after its deletion", id)
		}
	}
	if _, ok := state(secondEp.ID); !ok {
		t.Fatal("deleting two endpoints took a third")
	}
	if _, err := e.webhooks.Get(ctx, webhook.AccountOwners(theirs.ID), strangerEp.ID); err != nil {
		t.Fatalf("the other account's endpoint: %v", err)
	}
}
