package cluster

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"broll/billing/billingtest"
	"broll/embed/embedtest"
	"broll/internal/testkit"
)

// TestRevocationSurvivesRedisDataLoss: a key revoked on one node stays
// refused on every node after Redis loses its data (revocation markers
// included), although the other node still holds the key in its auth
// cache; a live key keeps working. Both ways Redis forgets: FLUSHALL, and a
// restart of a Redis that keeps nothing on disk.
func TestRevocationSurvivesRedisDataLoss(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		volatile bool
		forget   func(t *testing.T, r *redisServer)
	}{
		{"flushall", false, func(t *testing.T, r *redisServer) {
			c := redis.NewClient(&redis.Options{Addr: r.URL()[len("redis://") : len(r.URL())-len("/0")]})
			defer c.Close()
			if err := c.FlushAll(context.Background()).Err(); err != nil {
				t.Fatal(err)
			}
		}},
		{"restart without persistence", true, func(t *testing.T, r *redisServer) {
			r.stop()
			r.start()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pool, dbURL := testkit.NewPool(t)
			redisSrv := startRedisServer(t, tc.volatile)
			// A long auth cache: without the epoch check the stale entry
			// would be believed for ten minutes.
			env := with(baseEnv(t, dbURL, redisSrv.URL(), embedtest.NewOllama(t, embedtest.Options{}).URL),
				map[string]string{"BROLL_AUTH_CACHE_TTL": "10m"})
			a, b := startAPI(t, env), startAPI(t, env)
			acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 5000})
			doomed := acct.CustomerKey(t, pool, "doomed")
			live := acct.CustomerKey(t, pool, "live")
			for _, n := range []node{a, b} {
				for _, k := range []string{doomed.Secret, live.Secret} {
					if r := call(t, n.url, "GET", "/api/v1/balance", k, nil); r.status != 200 {
						t.Fatalf("before: %d %s", r.status, r.raw)
					}
				}
			}
			// Revoked through node a; node b has not seen a request of the
			// key since, so its cache still holds it.
			if r := call(t, a.url, "DELETE", "/api/v1/keys?id="+doomed.ID.String(), acct.RootKey.Secret, nil); r.status != 200 {
				t.Fatalf("revoke: %d %s", r.status, r.raw)
			}

			tc.forget(t, redisSrv)

			for name, n := range map[string]node{"a": a, "b": b} {
				wantProblem(t, "revoked key on node "+name, call(t, n.url, "GET", "/api/v1/balance", doomed.Secret, nil), 401, "unauthorized")
			}
			for name, n := range map[string]node{"a": a, "b": b} {
				if r := call(t, n.url, "GET", "/api/v1/balance", live.Secret, nil); r.status != 200 {
					t.Fatalf("live key on node %s: %d %s", name, r.status, r.raw)
				}
				wantProblem(t, "revoked key again on node "+name, call(t, n.url, "GET", "/api/v1/balance", doomed.Secret, nil), 401, "unauthorized")
			}
			if !b.logged("redis lost its data") {
				t.Error("node b did not log that Redis lost its data")
			}
			a.stop(t)
			b.stop(t)
		})
	}
}
