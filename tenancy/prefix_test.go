package tenancy

import (
	"context"
	"slices"
	"testing"

	"broll/internal/admission"
	"broll/internal/testkit"
)

// TestPrefixesKeepDeploymentsApart: two gates with different key prefixes
// on one Redis database, as two deployments (or two tests) sharing it,
// admitting the same key: the rate limit one spends, the revocation and
// change markers one writes and the data loss one suffers are its own.
func TestPrefixesKeepDeploymentsApart(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	other := testkit.Redis(t) // the same database, another prefix
	if other.Prefix == b.prefix {
		t.Fatalf("two keyspaces share the prefix %q", b.prefix)
	}
	lossesA, lossesZ := 0, 0
	a := admission.NewGate(b.rdb, b.prefix, NewUsage(b.pool, b.rdb, b.prefix),
		admission.GateOptions{PerMinute: 2, OnDataLoss: func() { lossesA++ }, Now: b.clock.Now})
	z := admission.NewGate(b.rdb, other.Prefix, NewUsage(b.pool, b.rdb, other.Prefix),
		admission.GateOptions{PerMinute: 2, OnDataLoss: func() { lossesZ++ }, Now: b.clock.Now})
	p := b.account(t)
	admit := func(g *admission.Gate) admission.Decision {
		t.Helper()
		d, err := g.Admit(ctx, p.Caller())
		if err != nil {
			t.Fatal(err)
		}
		if d.Fallback {
			t.Fatal("decided without Redis")
		}
		return d
	}

	t.Run("rate limit", func(t *testing.T) {
		for i := range 2 {
			if d := admit(a); !d.Allowed {
				t.Fatalf("request %d on the first deployment refused: %+v", i+1, d)
			}
		}
		if d := admit(a); d.Allowed {
			t.Fatalf("third request within the minute allowed (limit 2): %+v", d)
		}
		if d := admit(z); !d.Allowed || d.Remaining != 1 {
			t.Fatalf("the other deployment counted the first one's requests: %+v", d)
		}
	})
	t.Run("revocation and change markers", func(t *testing.T) {
		if err := admission.MarkRevoked(ctx, b.rdb, b.prefix, p.KeyID); err != nil {
			t.Fatal(err)
		}
		if err := admission.MarkChanged(ctx, b.rdb, b.prefix, p.KeyID, p.SettingsVersion+1); err != nil {
			t.Fatal(err)
		}
		if d := admit(a); !d.Revoked || !d.Stale {
			t.Fatalf("the deployment that wrote the markers missed them: %+v", d)
		}
		if d := admit(z); d.Revoked || d.Stale {
			t.Fatalf("the other deployment read the first one's markers: %+v", d)
		}
	})
	t.Run("data loss", func(t *testing.T) {
		if lossesA != 1 || lossesZ != 1 {
			t.Fatalf("drops before any loss: %d and %d, want 1 each (first sight)", lossesA, lossesZ)
		}
		if err := b.redis.Delete(ctx); err != nil {
			t.Fatal(err)
		}
		admit(a)
		admit(z)
		if lossesA != 2 || lossesZ != 1 {
			t.Fatalf("after the first deployment's keys were lost: drops %d and %d, want 2 and 1", lossesA, lossesZ)
		}
	})
	t.Run("every key under its prefix", func(t *testing.T) {
		keys, err := other.Keys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{other.Prefix + "rate:key:" + p.KeyID.String(), other.Prefix + "epoch"} {
			if !slices.Contains(keys, want) {
				t.Errorf("no key %q among the deployment's %q", want, keys)
			}
		}
		// redis_rate's own name for the limiter state, outside any prefix.
		if n, err := b.rdb.Exists(ctx, "rate:key:"+p.KeyID.String()).Result(); err != nil || n != 0 {
			t.Errorf("limiter state outside the prefix: %d keys, %v", n, err)
		}
	})
}
