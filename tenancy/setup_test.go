package tenancy

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"broll/internal/admission"
	"broll/internal/displayname"
	"broll/internal/testkit"
)

// bundle is what a tenancy test works with: a database and a Redis
// keyspace of its own, and the services over them.
type bundle struct {
	pool *pgxpool.Pool
	rdb  *redis.Client
	// redis is the test's keyspace; prefix its key prefix.
	redis  testkit.Keyspace
	prefix string
	svc    *Service
	usage  *Usage
	gate   *admission.Gate
	clock  *testkit.Clock
}

func setup(t testing.TB) *bundle {
	t.Helper()
	pool, _ := testkit.NewPool(t)
	ks := testkit.Redis(t)
	rdb := ks.Client
	usage := NewUsage(pool, rdb, ks.Prefix)
	b := &bundle{pool: pool, rdb: rdb, redis: ks, prefix: ks.Prefix, svc: New(pool, ServiceOptions{}), usage: usage, clock: testkit.NewClock(time.Now())}
	b.gate = admission.NewGate(rdb, ks.Prefix, usage, admission.GateOptions{PerMinute: 60, Now: b.clock.Now})
	return b
}

var accountSeq atomic.Int64

// account creates an account with a root key and returns the root's principal.
func (b *bundle) account(t testing.TB) Principal {
	t.Helper()
	ctx := context.Background()
	a, err := CreateAccount(ctx, b.pool, displayname.Rule{}, "Test Platform", fmt.Sprintf("t%d-%d", time.Now().UnixNano()%1e12, accountSeq.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	root, err := CreateRootKey(ctx, b.pool, a.ID, "root")
	if err != nil {
		t.Fatal(err)
	}
	return Principal{KeyID: root.ID, AccountID: a.ID, RootKeyID: root.ID, Kind: KindRoot, Scopes: root.Scopes}
}

// revokedKey is where a key's revocation marker is expected in Redis, the
// name nodes of every build read (package internal/admission).
func revokedKey(prefix string, id uuid.UUID) string { return prefix + "revoked:" + id.String() }
