package webhook_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/billing"
	"broll/billing/billingtest"
	"broll/internal/apperr"
	"broll/internal/config"
	"broll/internal/money"
	"broll/internal/outbox"
	"broll/internal/testkit"
	"broll/tenancy"
	"broll/webhook"
	"broll/wiring"
)

// crossLowBalance makes one purchase by buyer take the account's balance
// across its threshold (set to the balance just before), which writes one
// balance.low for every subscribed endpoint of the account.
func crossLowBalance(t *testing.T, b bundle, g *wiring.Services, buyer tenancy.Principal, video uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	var balance int64
	if err := b.pool.QueryRow(ctx, `SELECT balance_cents FROM accounts WHERE id = $1`, b.acct.ID).Scan(&balance); err != nil {
		t.Fatal(err)
	}
	threshold := money.Cents(balance)
	if err := g.Billing.SetAccountLowBalance(ctx, b.acct.ID, &threshold); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Billing.Purchase(ctx, buyer, billing.PurchaseRequest{VideoIDs: []uuid.UUID{video}}); err != nil {
		t.Fatal(err)
	}
}

// runLoop runs the worker's delivery loop until the returned stop is
// called, which waits for the loop to end.
func runLoop(t *testing.T, b bundle) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	d := webhook.NewDeliverer(b.pool, b.sealer, webhook.DelivererOptions{
		Allow: loopback(t), PollInterval: 10 * time.Millisecond, RetryBase: time.Millisecond, RetryMax: 5 * time.Millisecond,
	})
	go func() { defer close(done); d.Run(ctx) }()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	return stop
}

// waitMessages waits until rcv has got n requests.
func waitMessages(t *testing.T, rcv *receiver, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(rcv.messages()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("receiver got %d requests in 30s, want %d", len(rcv.messages()), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitNonePending waits until endpoint has no pending delivery.
func waitNonePending(t *testing.T, b bundle, endpoint uuid.UUID) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var pending int
		if err := b.pool.QueryRow(context.Background(), `SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1 AND state = 'pending'`,
			endpoint).Scan(&pending); err != nil {
			t.Fatal(err)
		}
		if pending == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries still pending for endpoint %s after 30s", pending, endpoint)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Revoking a root key ends its endpoints' deliveries in the revocation's
// own transaction: a balance.low queued for its endpoint just before the
// revocation and one written after it never reach its receiver, while the
// worker's delivery loop keeps bringing both to a live root's endpoint. Its
// endpoint is disabled, says why, keeps no secret and cannot be enabled
// again.
func TestRevokedRootEndpointGetsNoDelivery(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	rds := testkit.Redis(t)
	g := b.services(t, rds.Client, func(c *config.Config) { c.RedisPrefix = rds.Prefix })
	second := b.acct.AnotherRoot(t, b.pool, "second integration")
	live, revoked := newReceiver(t), newReceiver(t)
	if _, err := b.hooks.Create(ctx, b.owner(), webhook.NewEndpoint{URL: live.URL, Events: []string{outbox.BalanceLow}}); err != nil {
		t.Fatal(err)
	}
	gone, err := b.hooks.Create(ctx, webhook.RootKey(b.acct.ID, second.RootKey.ID),
		webhook.NewEndpoint{URL: revoked.URL, Events: []string{outbox.BalanceLow}})
	if err != nil {
		t.Fatal(err)
	}
	videos := billingtest.Videos(t, b.pool, 3, "easy")

	// Before the revocation both endpoints receive: the receiver works.
	stop := runLoop(t, b)
	crossLowBalance(t, b, g, b.acct.Root, videos[0])
	waitMessages(t, live, 1)
	waitMessages(t, revoked, 1)
	// A receiver can have its message before the loop records it sent: stop
	// only once it has, or the stop may leave that delivery pending.
	waitNonePending(t, b, gone.ID)
	stop()

	// Queued while no worker runs, then the root key is revoked (as
	// brollctl does, the widest scope), then another crossing.
	crossLowBalance(t, b, g, b.acct.Root, videos[1])
	var queued int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1 AND state = 'pending'`,
		gone.ID).Scan(&queued); err != nil || queued != 1 {
		t.Fatalf("%d deliveries queued for the endpoint before the revocation, want 1 (%v)", queued, err)
	}
	if _, err := g.KeyChanges.Revoke(ctx, tenancy.KeyScope{}, second.RootKey.ID); err != nil {
		t.Fatal(err)
	}
	crossLowBalance(t, b, g, b.acct.Root, videos[2])

	stop = runLoop(t, b)
	waitMessages(t, live, 3)
	// Once no delivery of the account's enabled endpoints is pending any
	// more, the loop has sent everything it ever will.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var pending int
		if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
			WHERE e.account_id = $1 AND d.state = 'pending' AND e.enabled`, b.acct.ID).Scan(&pending); err != nil {
			t.Fatal(err)
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries still pending after 30s", pending)
		}
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	if n := len(revoked.messages()); n != 1 {
		t.Fatalf("the revoked root's receiver got %d requests, want only the 1 sent before the revocation", n)
	}

	got, err := b.hooks.Get(ctx, webhook.AccountOwners(b.acct.ID), gone.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Enabled || got.DisabledAt == nil || !strings.Contains(got.DisabledReason, "revoked") || !got.RootRevoked {
		t.Fatalf("the revoked root's endpoint: %+v", got)
	}
	var secrets int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_secrets WHERE endpoint_id = $1`, gone.ID).Scan(&secrets); err != nil {
		t.Fatal(err)
	}
	if secrets != 0 {
		t.Fatalf("after the revocation the endpoint keeps %d secrets, want none", secrets)
	}
	// The worker's pruning gives up what was queued for it.
	if _, err := b.deliverer.Prune(ctx); err != nil {
		t.Fatal(err)
	}
	var pending int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1 AND state = 'pending'`,
		gone.ID).Scan(&pending); err != nil || pending != 0 {
		t.Fatalf("%d deliveries still pending for the ended endpoint after pruning (%v)", pending, err)
	}
	_, err = b.hooks.Enable(ctx, webhook.AccountOwners(b.acct.ID), gone.ID)
	if apperr.CodeOf(err) != apperr.Conflict {
		t.Fatalf("enabling the revoked root's endpoint: %v, want conflict", err)
	}
}

// An attempt already under way when its root key is revoked ends as it
// ends; nothing more is sent, and once the worker has given up the
// endpoint's deliveries, a failure does not make one pending again.
func TestAttemptInFlightAtRevocationIsNotRetried(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	rds := testkit.Redis(t)
	g := b.services(t, rds.Client, func(c *config.Config) { c.RedisPrefix = rds.Prefix })
	second := b.acct.AnotherRoot(t, b.pool, "second integration")
	rcv := newReceiver(t)
	release := make(chan struct{})
	rcv.status = func(int) int {
		<-release
		return http.StatusServiceUnavailable
	}
	ep, err := b.hooks.Create(ctx, webhook.RootKey(b.acct.ID, second.RootKey.ID),
		webhook.NewEndpoint{URL: rcv.URL, Events: []string{outbox.BalanceLow}})
	if err != nil {
		t.Fatal(err)
	}
	writeEvents(t, b, 1, outbox.BalanceLow)
	sent := make(chan error, 1)
	go func() {
		_, err := b.deliverer.DeliverDue(ctx)
		sent <- err
	}()
	waitMessages(t, rcv, 1) // the attempt is at the receiver, unanswered
	if _, err := g.KeyChanges.Revoke(ctx, tenancy.KeyScope{}, second.RootKey.ID); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if _, err := b.deliverer.DeliverDue(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(rcv.messages()); n != 1 {
		t.Fatalf("the receiver got %d requests, want the 1 in flight at the revocation", n)
	}

	// Given up while a second attempt is in flight (put back on by hand,
	// as the previous release's enabling would): its failure keeps it so.
	if _, err := b.pool.Exec(ctx, `UPDATE webhook_endpoints SET enabled = true WHERE id = $1`, ep.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(ctx, `INSERT INTO webhook_secrets (endpoint_id, secret) VALUES ($1, 'whsec_c2VjcmV0')`, ep.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(ctx, `UPDATE webhook_deliveries SET next_attempt_at = now() WHERE endpoint_id = $1`, ep.ID); err != nil {
		t.Fatal(err)
	}
	release = make(chan struct{})
	go func() {
		_, err := b.deliverer.DeliverDue(ctx)
		sent <- err
	}()
	waitMessages(t, rcv, 2)
	if _, err := b.pool.Exec(ctx, `UPDATE webhook_endpoints SET enabled = false WHERE id = $1`, ep.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.deliverer.Prune(ctx); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	var state string
	if err := b.pool.QueryRow(ctx, `SELECT state FROM webhook_deliveries WHERE endpoint_id = $1`, ep.ID).Scan(&state); err != nil {
		t.Fatal(err)
	}
	if state != "failed" {
		t.Fatalf("the delivery given up during its attempt is %s after the attempt failed, want failed", state)
	}
	log, err := b.hooks.Deliveries(ctx, webhook.AccountOwners(b.acct.ID), ep.ID, 0)
	if err != nil || len(log) != 2 || log[0].StatusCode == nil || *log[0].StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("the attempts' log: %+v %v", log, err)
	}
}

// A root key revoked by any writer of the row, not only by tenancy's
// revocation (the previous release's API node during a rolling upgrade
// sends this very statement), ends its endpoints in that transaction.
func TestAnyRevocationOfTheRowEndsEndpoints(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	second := b.acct.AnotherRoot(t, b.pool, "second integration")
	ep, err := b.hooks.Create(ctx, webhook.RootKey(b.acct.ID, second.RootKey.ID),
		webhook.NewEndpoint{URL: "https://hooks.example.com/second", Events: []string{outbox.BalanceLow}})
	if err != nil {
		t.Fatal(err)
	}
	writeEvents(t, b, 1, outbox.BalanceLow)
	if _, err := b.pool.Exec(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1`, second.RootKey.ID); err != nil {
		t.Fatal(err)
	}
	got, err := b.hooks.Get(ctx, webhook.AccountOwners(b.acct.ID), ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	var secrets int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_secrets WHERE endpoint_id = $1`, ep.ID).Scan(&secrets); err != nil {
		t.Fatal(err)
	}
	if got.Enabled || !got.RootRevoked || secrets != 0 {
		t.Fatalf("after the row's revocation: %+v, %d secrets", got, secrets)
	}
	// The delivery queued before is never claimed.
	if n, err := b.deliverer.DeliverDue(ctx); err != nil || n != 0 {
		t.Fatalf("the worker claimed %d deliveries of the ended endpoint (%v)", n, err)
	}
}

// An endpoint created while its root key is being revoked does not outlive
// the revocation: the creation waits for it and is refused, rather than
// adding a live endpoint the revocation could not see.
func TestCreationDuringRevocationIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	second := b.acct.AnotherRoot(t, b.pool, "second integration")
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `UPDATE api_keys SET revoked_at = now() WHERE id = $1`, second.RootKey.ID); err != nil {
		t.Fatal(err)
	}
	created := make(chan error, 1)
	go func() {
		_, err := b.hooks.Create(ctx, webhook.RootKey(b.acct.ID, second.RootKey.ID),
			webhook.NewEndpoint{URL: "https://hooks.example.com/late", Events: []string{outbox.BalanceLow}})
		created <- err
	}()
	// The creation either ends on its own or waits for the revocation's
	// lock; then the revocation commits.
	var createErr error
	done := false
	deadline := time.Now().Add(30 * time.Second)
	for !done {
		select {
		case createErr = <-created:
			done = true
			continue
		default:
		}
		var waiting int
		if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the creation neither ended nor waited")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if !done {
		createErr = <-created
	}
	var live int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_endpoints WHERE root_key_id = $1 AND enabled`,
		second.RootKey.ID).Scan(&live); err != nil {
		t.Fatal(err)
	}
	if live != 0 || apperr.CodeOf(createErr) != apperr.NotFound {
		t.Fatalf("a creation during the revocation: %v, and %d live endpoints of the revoked root key", createErr, live)
	}
}
