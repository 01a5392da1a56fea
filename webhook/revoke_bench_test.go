package webhook_test

import (
	"context"
	"fmt"
	"testing"

	"broll/internal/config"
	"broll/internal/outbox"
	"broll/internal/testkit"
	"broll/tenancy"
	"broll/webhook"
)

// BenchmarkRevokeRoot is one root key's revocation through tenancy's
// KeyChanges (the rows, key.revoked, the Redis markers), for a root key with
// no endpoint, with 20, and with 20 that have 500 deliveries pending each:
// its revocation ends the endpoints in its transaction, and its cost must
// not grow with their backlog (the worker gives the deliveries up later):
// go test -run '^$' -bench RevokeRoot -benchtime 20x ./webhook/
func BenchmarkRevokeRoot(b *testing.B) {
	for _, c := range []struct{ endpoints, pending int }{{0, 0}, {20, 0}, {20, 500}} {
		b.Run(fmt.Sprintf("endpoints=%d/pending=%d", c.endpoints, c.pending), func(b *testing.B) {
			bn := setup(b)
			ctx := context.Background()
			rds := testkit.Redis(b)
			g := bn.services(b, rds.Client, func(cfg *config.Config) { cfg.RedisPrefix = rds.Prefix })
			for i := range b.N {
				b.StopTimer()
				root := bn.acct.AnotherRoot(b, bn.pool, fmt.Sprintf("integration %d", i))
				for j := range c.endpoints {
					if _, err := bn.hooks.Create(ctx, webhook.RootKey(bn.acct.ID, root.RootKey.ID), webhook.NewEndpoint{
						URL: fmt.Sprintf("https://hooks.example.com/%d/%d", i, j), Events: []string{outbox.KeyCreated}}); err != nil {
						b.Fatal(err)
					}
				}
				if c.pending > 0 {
					// Events of the whole service reach every subscribed
					// endpoint; the earlier roots' are off already.
					if _, err := bn.pool.Exec(ctx, `INSERT INTO webhook_events (type) SELECT 'key.created' FROM generate_series(1, $1)`,
						c.pending); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				if _, err := g.KeyChanges.Revoke(ctx, tenancy.KeyScope{}, root.RootKey.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
