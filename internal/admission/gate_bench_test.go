package admission_test

import (
	"context"
	"testing"
)

// BenchmarkAdmit is one key's admissions from many goroutines, as an API
// node under load makes them: the rate limit, the markers and the usage
// counters, one Redis command each (go test -run '^$' -bench Admit
// ./tenancy/). Its time includes Redis's, on the same machine.
func BenchmarkAdmit(b *testing.B) {
	bn := setup(b)
	p := bn.account(b)
	p.RateLimitPerMinute = 100_000
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := bn.gate.Admit(ctx, p); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
