package webhook_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"broll/billing/billingtest"
	"broll/internal/outbox"
	"broll/webhook"
)

// One account's 20 endpoints that never answer do not hold up another
// account's event: with the worker's delivery loop running, account A's
// event arrives within 5 s while every endpoint of account B hangs.
func TestHangingEndpointsDoNotDelayAnotherAccount(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	slow := billingtest.NewAccount(t, b.pool, billingtest.AccountOpts{})
	slowOwner := webhook.RootKey(slow.ID, slow.RootKey.ID)
	release := make(chan struct{})
	for range 20 {
		srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			select { // never answers while the test runs
			case <-r.Context().Done():
			case <-release:
			}
		}))
		t.Cleanup(srv.Close) // after the deferred release below
		if _, err := b.hooks.Create(ctx, slowOwner, webhook.NewEndpoint{URL: srv.URL, Events: []string{outbox.KeyRevoked}}); err != nil {
			t.Fatal(err)
		}
	}
	// Account B's events are older than A's: first in, first out would
	// send all of them first.
	if _, err := b.pool.Exec(ctx, `INSERT INTO webhook_events (account_id, type, data)
		SELECT $1, 'key.revoked', jsonb_build_object('n', g) FROM generate_series(1, 5) g`, slow.ID); err != nil {
		t.Fatal(err)
	}
	rcv := newReceiver(t)
	if _, err := b.hooks.Create(ctx, b.owner(), webhook.NewEndpoint{URL: rcv.URL, Events: []string{outbox.KeyRevoked}}); err != nil {
		t.Fatal(err)
	}

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	d := webhook.NewDeliverer(b.pool, b.sealer, webhook.DelivererOptions{Allow: loopback(t), PollInterval: 20 * time.Millisecond})
	go func() { defer close(done); d.Run(runCtx) }()
	defer func() {
		stop()
		<-done
		close(release)
	}()
	// Wait until B's endpoints are being tried, then write A's event.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var inFlight int
		if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
			WHERE e.account_id = $1 AND d.attempts > 0`, slow.ID).Scan(&inFlight); err != nil {
			t.Fatal(err)
		}
		if inFlight > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker never tried account B's endpoints")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// B's endpoints hang until the test ends: delivery that waited on them
	// would never bring A's event, so the deadline only bounds a failure.
	writeEvents(t, b, 1, outbox.KeyRevoked)
	deadline = time.Now().Add(30 * time.Second)
	for len(rcv.messages()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("account A's event did not arrive while account B's endpoints hang")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
