package webhook_test

import (
	"context"
	"fmt"
	"testing"

	"broll/billing/billingtest"
	"broll/internal/apperr"
	"broll/internal/config"
	"broll/internal/outbox"
	"broll/internal/testkit"
	"broll/tenancy"
	"broll/webhook"
)

// makeEndpoints creates n endpoints of owner and fails on the first refusal.
func makeEndpoints(t *testing.T, hooks *webhook.Service, owner webhook.Owner, n int) {
	t.Helper()
	for i := range n {
		_, err := hooks.Create(context.Background(), owner, webhook.NewEndpoint{
			URL: fmt.Sprintf("https://hooks.example.com/%s/%d", owner.Key, i), Events: []string{outbox.KeyCreated}})
		if err != nil {
			t.Fatalf("endpoint %d of root key %s: %v", i+1, owner.Key, err)
		}
	}
}

// refused checks that owner's next endpoint is refused as over the cap.
func refused(t *testing.T, hooks *webhook.Service, owner webhook.Owner) {
	t.Helper()
	_, err := hooks.Create(context.Background(), owner, webhook.NewEndpoint{URL: "https://hooks.example.com/one-more", Events: []string{outbox.KeyCreated}})
	if apperr.CodeOf(err) != apperr.Conflict {
		t.Fatalf("an endpoint past the cap of root key %s: %v, want conflict", owner.Key, err)
	}
}

// The cap of 20 endpoints counts per root key: one integration's 19 do
// not stop another's, each stops at its own 20, and a revoked root key's
// endpoints count toward nothing.
func TestEndpointCapIsPerRootKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	first := b.owner()
	second := webhook.RootKey(b.acct.ID, b.acct.AnotherRoot(t, b.pool, "second integration").RootKey.ID)
	third := b.acct.AnotherRoot(t, b.pool, "third integration")

	makeEndpoints(t, b.hooks, first, 19)
	makeEndpoints(t, b.hooks, second, 1)
	makeEndpoints(t, b.hooks, first, 1) // the account holds 21: the first root key's 20th
	refused(t, b.hooks, first)
	makeEndpoints(t, b.hooks, second, 19)
	refused(t, b.hooks, second)

	// The third root key makes its 20, then is revoked: a new root key of
	// the account makes its own 20 beside them.
	thirdOwner := webhook.RootKey(b.acct.ID, third.RootKey.ID)
	makeEndpoints(t, b.hooks, thirdOwner, 20)
	rds := testkit.Redis(t)
	g := b.services(t, rds.Client, func(c *config.Config) { c.RedisPrefix = rds.Prefix })
	if _, err := g.KeyChanges.Revoke(ctx, tenancy.KeysOfAccount(b.acct.ID), third.RootKey.ID); err != nil {
		t.Fatal(err)
	}
	var counted int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_endpoints WHERE root_key_id = $1 AND enabled`,
		third.RootKey.ID).Scan(&counted); err != nil || counted != 0 {
		t.Fatalf("%d endpoints of the revoked root key still enabled (%v)", counted, err)
	}
	fourth := b.acct.AnotherRoot(t, b.pool, "fourth integration")
	makeEndpoints(t, b.hooks, webhook.RootKey(b.acct.ID, fourth.RootKey.ID), 20)
	all, err := b.hooks.List(ctx, webhook.AccountOwners(b.acct.ID))
	if err != nil || len(all) != 80 {
		t.Fatalf("the account's owners see %d endpoints, want 80 (%v)", len(all), err)
	}
	// Another account is untouched by any of it.
	other := billingtest.NewAccount(t, b.pool, billingtest.AccountOpts{})
	makeEndpoints(t, b.hooks, webhook.RootKey(other.ID, other.RootKey.ID), 1)
}
