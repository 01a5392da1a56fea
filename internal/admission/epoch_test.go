package admission_test

import (
	"context"
	"testing"

	"broll/internal/admission"
)

// TestGateNoticesRedisDataLoss: the gate calls its data-loss hook when the
// epoch is first seen and whenever Redis has lost it since, and not while
// it stays.
func TestGateNoticesRedisDataLoss(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	p := b.account(t)
	losses := 0
	b.gate = admission.NewGate(b.rdb, b.prefix, b.usage, admission.GateOptions{PerMinute: 60, OnDataLoss: func() { losses++ }, Now: b.clock.Now})
	admit := func() {
		t.Helper()
		if _, err := b.gate.Admit(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	admit()
	if losses != 1 {
		t.Fatalf("first admission: %d drops, want 1 (nothing cached can predate it)", losses)
	}
	for range 5 {
		admit()
	}
	if losses != 1 {
		t.Fatalf("while the epoch stays: %d drops, want 1", losses)
	}
	// Redis loses the keys (of this test's prefix: a FLUSHDB would take
	// the keys of the tests running beside it too).
	if err := b.redis.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	admit()
	if losses != 2 {
		t.Fatalf("after the keys were lost: %d drops, want 2", losses)
	}
	// Another node wrote a new epoch first: this one sees a changed value.
	if err := b.rdb.Set(ctx, epochKey(b.prefix), "another", 0).Err(); err != nil {
		t.Fatal(err)
	}
	admit()
	admit()
	if losses != 3 {
		t.Fatalf("after the epoch changed: %d drops, want 3", losses)
	}
}
