package idempotency_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"broll/billing/billingtest"
	"broll/internal/database"
	"broll/internal/idempotency"
	"broll/internal/testkit"
)

// TestOneClaimAtATime: many requests with one Idempotency-Key at once,
// through two stores (two nodes, each with its own pool), round after
// round: exactly one of each round runs, nobody runs while it does, and
// every other request gets its answer or is told the key is in use. A
// request that found the key's lock taken once inserted the key's row
// without it, and the lock's holder then took that row over as an
// orphan: two requests ran at once.
func TestOneClaimAtATime(t *testing.T) {
	t.Parallel()
	_, url := testkit.NewPool(t)
	ctx := context.Background()
	var stores []*idempotency.Store
	var first *billingtest.Account
	for i := range 2 {
		pool, err := database.Open(ctx, fmt.Sprintf("%s&application_name=idem_race_%d&pool_max_conns=40", url, i))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		if first == nil {
			a := billingtest.NewAccount(t, pool, billingtest.AccountOpts{})
			first = &a
		}
		stores = append(stores, idempotency.New(pool, testSealer(t), idempotency.StoreOptions{Wait: 5 * time.Second, Stale: time.Hour}))
	}
	key := first.Root.KeyID
	hash := idempotency.Hash("POST", "/x", []byte("a"))
	const rounds, racers = 20, 24
	for round := range rounds {
		idem := fmt.Sprintf("race-%d", round)
		var running, ran, replayed atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, racers)
		for i := range racers {
			wg.Go(func() {
				<-start
				claim, stored, err := stores[i%2].Begin(ctx, key, idem, hash)
				switch {
				case isInUse(err):
				case err != nil:
					errs <- err
				case stored != nil:
					replayed.Add(1)
				default:
					ran.Add(1)
					if running.Add(1) > 1 {
						errs <- fmt.Errorf("round %d: two requests ran at once", round)
					}
					time.Sleep(20 * time.Millisecond)
					running.Add(-1)
					if err := claim.Finish(ctx, idempotency.Response{Status: 200, Body: []byte("{}")}); err != nil {
						errs <- err
					}
				}
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if ran.Load() != 1 {
			t.Fatalf("round %d: %d requests ran, %d replayed; want exactly one run", round, ran.Load(), replayed.Load())
		}
	}
}
