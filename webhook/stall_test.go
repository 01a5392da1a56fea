package webhook_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"broll/internal/outbox"
	"broll/internal/testkit"
	"broll/webhook"
)

// TestStalledWorkerKeepsOffTheNextClaim: a worker whose send outlasts its
// lease finds, when it records the failure, that another worker has
// claimed the delivery since and is sending it. It logs its attempt and
// leaves the delivery alone: clearing the new claimer's lease (or making
// the delivery due again) would let a third worker send it while the
// second still does. Its receiver sees the event twice (the stall and the
// claim after it), never three times.
func TestStalledWorkerKeepsOffTheNextClaim(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	rcv := newReceiver(t)
	second := make(chan struct{})
	rcv.status = func(n int) int {
		switch n {
		case 1: // the stalled worker's send: past its lease, then a failure
			time.Sleep(1500 * time.Millisecond)
			return http.StatusInternalServerError
		case 2: // the next claimer's send, held until the stall is recorded
			<-second
		}
		return http.StatusOK
	}
	subscribed(t, b, rcv, outbox.ClipsEmbedded, 1)
	opts := webhook.DelivererOptions{Allow: loopback(t), RetryBase: time.Millisecond}
	stalled := opts
	stalled.Lease = 500 * time.Millisecond
	deliver := func(d *webhook.Deliverer) int {
		n, err := d.DeliverDue(ctx)
		if err != nil {
			t.Error(err)
		}
		return n
	}

	var wg sync.WaitGroup
	wg.Go(func() { deliver(webhook.NewDeliverer(b.pool, b.sealer, stalled)) })
	// The stalled worker is sending, and its lease (taken before) has
	// lapsed: the next worker claims the delivery.
	deadline := time.Now().Add(10 * time.Second)
	for len(rcv.messages()) < 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(700 * time.Millisecond)
	wg.Go(func() { deliver(webhook.NewDeliverer(b.pool, b.sealer, opts)) })
	wg.Go(func() {
		defer close(second)
		// Until the next claimer is sending and the stalled send's failure
		// is recorded.
		deadline := time.Now().Add(10 * time.Second)
		for len(rcv.messages()) < 2 || testkit.Count(t, b.pool, `SELECT count(*) FROM webhook_attempts`) < 1 {
			if time.Now().After(deadline) {
				t.Error("the stalled send was never recorded")
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		if n := deliver(webhook.NewDeliverer(b.pool, b.sealer, opts)); n != 0 {
			t.Errorf("a third worker claimed %d deliveries while the second was sending", n)
		}
	})
	wg.Wait()
	if got := len(rcv.messages()); got != 2 {
		t.Errorf("the receiver got %d requests, want 2 (the stalled send and the next claim's)", got)
	}
	var state string
	var attempts int
	if err := b.pool.QueryRow(ctx, `SELECT state, attempts FROM webhook_deliveries`).Scan(&state, &attempts); err != nil {
		t.Fatal(err)
	}
	if state != "delivered" || attempts != 2 {
		t.Errorf("delivery %s after %d attempts, want delivered after 2", state, attempts)
	}
	if n := testkit.Count(t, b.pool, `SELECT count(*) FROM webhook_attempts`); n != 2 {
		t.Errorf("%d attempts logged, want 2", n)
	}
}
