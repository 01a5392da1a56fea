package billing_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"broll/billing"
	"broll/billing/billingtest"
	"broll/internal/money"
	"broll/internal/testkit"
	"broll/tenancy"
	"broll/wiring/wiringtest"
)

// BenchmarkPurchaseSpendLimits: the same concurrent purchases (16 keys of
// one account, each buying clips it does not own) with and without a spend
// limit on every key, so that the limit check's cost is the difference.
//
//	go test -run '^$' -bench PurchaseSpendLimits -benchtime 2000x -count 3 ./billing/
func BenchmarkPurchaseSpendLimits(b *testing.B) {
	pool, _ := testkit.NewPool(b)
	ctx := context.Background()
	svc := newService(b, pool)
	videos := billingtest.Videos(b, pool, 20000, "easy")
	for _, limited := range []bool{false, true} {
		b.Run(fmt.Sprintf("limits=%v", limited), func(b *testing.B) {
			acct := billingtest.NewAccount(b, pool, billingtest.AccountOpts{Credits: money.MaxCents})
			ten := wiringtest.Over(b, pool).Tenancy
			keys := make([]tenancy.Principal, 16)
			for i := range keys {
				spec := tenancy.CustomerKeySpec{Label: "bench"}
				if limited {
					spec.SpendLimit = &tenancy.SpendLimit{Amount: money.MaxCents, Period: tenancy.SpendMonth}
				}
				k, err := ten.CreateCustomerKeyWith(ctx, acct.Root, spec)
				if err != nil {
					b.Fatal(err)
				}
				keys[i] = billingtest.Principal(acct, k)
			}
			var worker, n atomic.Int64
			b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0))) // about 16 buyers at once
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				key := keys[int(worker.Add(1)-1)%len(keys)]
				for pb.Next() {
					v := videos[int(n.Add(1))%len(videos)]
					if _, err := svc.Purchase(ctx, key, billing.PurchaseRequest{VideoIDs: []uuid.UUID{v}}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
