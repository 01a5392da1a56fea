package admission_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"broll/internal/admission"
	"broll/internal/config"
	"broll/internal/displayname"
	"broll/internal/testkit"
	"broll/tenancy"
	"broll/wiring"
	"broll/wiring/wiringtest"
)

// bundle is what an admission test works with: a database and a Redis
// keyspace of its own, the usage counters over them and a gate.
type bundle struct {
	pool *pgxpool.Pool
	rdb  *redis.Client
	// redis is the test's keyspace; prefix its key prefix.
	redis  testkit.Keyspace
	prefix string
	usage  *tenancy.Usage
	gate   *admission.Gate
	clock  *testkit.Clock
}

func setup(t testing.TB) *bundle {
	t.Helper()
	pool, _ := testkit.NewPool(t)
	ks := testkit.Redis(t)
	cfg := config.Defaults()
	cfg.RedisPrefix = ks.Prefix
	// The usage counters the root builds; the gate is this test's own.
	usage := wiringtest.Open(t, cfg, wiring.Options{Parts: wiring.Redis, Pool: pool, Redis: ks.Client}).Usage
	b := &bundle{pool: pool, rdb: ks.Client, redis: ks, prefix: ks.Prefix, usage: usage, clock: testkit.NewClock(time.Now())}
	b.gate = admission.NewGate(ks.Client, ks.Prefix, usage, admission.GateOptions{PerMinute: 60, Now: b.clock.Now})
	return b
}

var accountSeq atomic.Int64

// account creates an account with a root key and returns the root as the
// admission sees it.
func (b *bundle) account(t testing.TB) admission.Caller {
	t.Helper()
	ctx := context.Background()
	a, err := tenancy.CreateAccount(ctx, b.pool, displayname.Rule{}, "Test Platform", fmt.Sprintf("a%d-%d", time.Now().UnixNano()%1e12, accountSeq.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	root, err := tenancy.CreateRootKey(ctx, b.pool, a.ID, "root")
	if err != nil {
		t.Fatal(err)
	}
	return admission.Caller{KeyID: root.ID, RootKeyID: root.ID}
}

// epochKey is where the gate keeps the Redis epoch.
func epochKey(prefix string) string { return admission.EpochKey(prefix) }
