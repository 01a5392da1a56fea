package admission_test

import (
	"context"
	"testing"

	"broll/internal/redisx"
)

// TestAdmissionSharesRedisRateAllowance: the admission script is
// redis_rate's limiter on the key the service's redis_rate limiter uses
// (redisx.Limiter, under the deployment's prefix), so a node of the build
// before (redis_rate itself) and this one spend one allowance during a
// rolling deploy, and the answer's figures agree with redis_rate's.
func TestAdmissionSharesRedisRateAllowance(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	p := b.account(t)
	p.RateLimitPerMinute = 5
	before := redisx.Limiter(b.rdb, b.prefix)
	for i := range 3 {
		res, err := before.Allow(ctx, "key:"+p.KeyID.String(), b.gate.LimitFor(p))
		if err != nil || res.Allowed != 1 {
			t.Fatalf("redis_rate request %d: %+v %v", i, res, err)
		}
	}
	for i, want := range []int{1, 0} {
		d, err := b.gate.Admit(ctx, p)
		if err != nil || !d.Allowed || d.Fallback || d.Remaining != want {
			t.Fatalf("admission %d after 3 by redis_rate: %+v %v, want allowed with %d left", i, d, err, want)
		}
	}
	d, err := b.gate.Admit(ctx, p)
	if err != nil || d.Allowed || d.RetryAfter <= 0 || d.Limit != 5 {
		t.Fatalf("sixth request of a 5/min allowance: %+v %v", d, err)
	}
	res, err := before.Allow(ctx, "key:"+p.KeyID.String(), b.gate.LimitFor(p))
	if err != nil || res.Allowed != 0 {
		t.Fatalf("redis_rate after the gate spent the rest: %+v %v", res, err)
	}
}
