package webhook_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"broll/internal/apperr"
	"broll/internal/outbox"
	"broll/webhook"
)

// subscribed creates an endpoint of rcv subscribed to typ and writes n
// events of that type for it to receive.
func subscribed(t *testing.T, b bundle, rcv *receiver, typ string, n int) webhook.Endpoint {
	t.Helper()
	ep, err := b.hooks.Create(context.Background(), b.owner(), webhook.NewEndpoint{URL: rcv.URL, Events: []string{typ}})
	if err != nil {
		t.Fatal(err)
	}
	writeEvents(t, b, n, typ)
	return ep.Endpoint
}

func writeEvents(t *testing.T, b bundle, n int, typ string) {
	t.Helper()
	_, err := b.pool.Exec(context.Background(), `INSERT INTO webhook_events (account_id, type, data)
		SELECT $1, $2, jsonb_build_object('n', g) FROM generate_series(1, $3) g`, b.acct.ID, typ, n)
	if err != nil {
		t.Fatal(err)
	}
}

// A receiver that answers 500 four times and then 200 gets the event on the
// fifth attempt, and only then is it delivered; the log has all five.
func TestRetriesUntilSuccess(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	rcv := newReceiver(t)
	rcv.status = func(n int) int {
		if n <= 4 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	}
	ep := subscribed(t, b, rcv, outbox.ClipsEmbedded, 1)
	b.drain(t, b.deliverer)
	// Nothing further is due: a few more rounds send nothing.
	for range 3 {
		if _, err := b.deliverer.DeliverDue(ctx); err != nil {
			t.Fatal(err)
		}
	}
	msgs := rcv.messages()
	if len(msgs) != 5 {
		t.Fatalf("receiver got %d requests, want 5", len(msgs))
	}
	for _, m := range msgs[1:] {
		if m.Header.Get("webhook-id") != msgs[0].Header.Get("webhook-id") {
			t.Fatal("the webhook-id changed between retries")
		}
	}
	log, err := b.hooks.Deliveries(ctx, b.owner(), ep.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 5 || log[0].StatusCode == nil || *log[0].StatusCode != 200 || log[0].State != "delivered" ||
		log[4].StatusCode == nil || *log[4].StatusCode != 500 || log[0].Attempts != 5 {
		t.Fatalf("delivery log %+v", log)
	}
	got, _ := b.hooks.Get(ctx, b.owner(), ep.ID)
	if got.FailingSince != nil || !got.Enabled {
		t.Fatalf("endpoint after a success: %+v", got)
	}
}

// An endpoint that has failed for 3 days is disabled, with a reason.
func TestEndpointFailingForThreeDaysIsDisabled(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	rcv := newReceiver(t)
	rcv.status = func(int) int { return http.StatusServiceUnavailable }
	ep := subscribed(t, b, rcv, outbox.KeyCreated, 1)
	if _, err := b.deliverer.DeliverDue(ctx); err != nil {
		t.Fatal(err)
	}
	// The failures began 3 days ago (moved back rather than waited for).
	if _, err := b.pool.Exec(ctx, `UPDATE webhook_endpoints SET failing_since = now() - interval '72 hours 1 minute' WHERE id = $1`, ep.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(ctx, `UPDATE webhook_deliveries SET next_attempt_at = now(), created_at = now() - interval '73 hours' WHERE endpoint_id = $1`, ep.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.deliverer.DeliverDue(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := b.hooks.Get(ctx, b.owner(), ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Enabled || got.DisabledAt == nil || got.DisabledReason == "" {
		t.Fatalf("endpoint after 3 days of failures: %+v", got)
	}
	var state string
	if err := b.pool.QueryRow(ctx, `SELECT state FROM webhook_deliveries WHERE endpoint_id = $1`, ep.ID).Scan(&state); err != nil || state != "failed" {
		t.Fatalf("delivery state %q %v, want failed", state, err)
	}
	if len(rcv.messages()) != 2 {
		t.Fatalf("receiver got %d requests, want 2", len(rcv.messages()))
	}
	if _, err := b.hooks.Enable(ctx, b.owner(), ep.ID); err != nil {
		t.Fatal(err)
	}
	got, _ = b.hooks.Get(ctx, b.owner(), ep.ID)
	if !got.Enabled || got.FailingSince != nil {
		t.Fatalf("endpoint after enabling: %+v", got)
	}
}

// Endpoints naming metadata or private addresses are refused when created;
// one that got into the table anyway is refused by the dialer's check of
// the address it would connect to, before any connection: no traffic is
// sent to such addresses.
func TestNonPublicAddressesRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	strict := webhook.New(b.pool, b.sealer, webhook.ServiceOptions{})
	for _, u := range []string{"https://169.254.169.254/latest/meta-data", "https://10.0.0.1/hook", "http://10.0.0.1/hook",
		"https://127.0.0.1/hook", "https://[::1]/hook", "https://[::ffff:10.0.0.1]/hook", "https://localhost/hook",
		"https://100.64.0.1/hook", "ftp://example.com/hook", "http://example.com/hook"} {
		_, err := strict.Create(ctx, b.owner(), webhook.NewEndpoint{URL: u, Events: []string{outbox.KeyCreated}})
		if apperr.CodeOf(err) != apperr.Invalid {
			t.Errorf("%s: got %v, want invalid_request", u, err)
		}
	}
	// The deliverer's own check, on endpoints written straight to the table.
	for _, u := range []string{"http://169.254.169.254/latest/meta-data", "http://10.0.0.1:9/hook"} {
		_, err := b.pool.Exec(ctx, `WITH e AS (INSERT INTO webhook_endpoints (account_id, root_key_id, url, events) VALUES ($1, $3, $2, '{key.revoked}') RETURNING id)
			INSERT INTO webhook_secrets (endpoint_id, secret) SELECT id, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' FROM e`, b.acct.ID, u, b.acct.RootKey.ID)
		if err != nil {
			t.Fatal(err)
		}
	}
	writeEvents(t, b, 1, outbox.KeyRevoked)
	strictDeliverer := webhook.NewDeliverer(b.pool, b.sealer, webhook.DelivererOptions{RetryBase: time.Hour})
	if n, err := strictDeliverer.DeliverDue(ctx); err != nil || n != 2 {
		t.Fatalf("deliver: %d %v", n, err)
	}
	rows, err := b.pool.Query(ctx, `SELECT a.error, a.status_code IS NULL, a.duration_ms FROM webhook_attempts a
		JOIN webhook_endpoints e ON e.id = a.endpoint_id WHERE e.account_id = $1`, b.acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var msg string
		var noStatus bool
		var ms int
		if err := rows.Scan(&msg, &noStatus, &ms); err != nil {
			t.Fatal(err)
		}
		n++
		if !noStatus || msg != "refused: the endpoint resolves to a non-public address" {
			t.Errorf("attempt: %q (no status: %v)", msg, noStatus)
		}
	}
	if n != 2 {
		t.Fatalf("%d attempts logged, want 2", n)
	}
}

// The guard itself: a dial to a non-public address fails with
// ErrForbiddenAddress from the Control hook, which runs before connect.
func TestGuardRefusesBeforeConnecting(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := newReceiver(t)
	ctx := context.Background()
	ep := subscribed(t, b, rcv, outbox.KeyRevoked, 1)
	// The loopback receiver is allowed for b.hooks but not for this
	// deliverer: the attempt fails and the receiver sees nothing.
	strict := webhook.NewDeliverer(b.pool, b.sealer, webhook.DelivererOptions{RetryBase: time.Hour})
	if _, err := strict.DeliverDue(ctx); err != nil {
		t.Fatal(err)
	}
	if len(rcv.messages()) != 0 {
		t.Fatal("a loopback receiver got a request without being allowed")
	}
	log, err := b.hooks.Deliveries(ctx, b.owner(), ep.ID, 0)
	if err != nil || len(log) != 1 || log[0].Error != "refused: the endpoint resolves to a non-public address" {
		t.Fatalf("log %+v %v", log, err)
	}
}

// Two deliverers share 1,000 events: each arrives exactly once. Then a
// worker that claims deliveries and dies loses nothing: after the lease
// they go to the other.
func TestTwoWorkersDeliverEachEventOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	rcv := newReceiver(t)
	subscribed(t, b, rcv, outbox.ClipsEmbedded, 1000)
	var wg sync.WaitGroup
	for range 2 {
		d := webhook.NewDeliverer(b.pool, b.sealer, webhook.DelivererOptions{Allow: loopback(t), Concurrency: 16})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n, err := d.DeliverDue(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if n == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	seen := map[string]int{}
	for _, m := range rcv.messages() {
		seen[m.Header.Get("webhook-id")]++
	}
	if len(seen) != 1000 {
		t.Fatalf("%d distinct events arrived, want 1000", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("event %s arrived %d times", id, n)
		}
	}
}

// Events past the retention go with their deliveries and log; pending
// deliveries and recent events stay.
func TestPruneKeepsRecentAndPending(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	rcv := newReceiver(t)
	ep := subscribed(t, b, rcv, outbox.KeyRevoked, 3)
	b.drain(t, b.deliverer)
	writeEvents(t, b, 1, outbox.KeyRevoked) // pending
	if _, err := b.pool.Exec(ctx, `UPDATE webhook_events SET created_at = now() - interval '31 days'
		WHERE account_id = $1 AND id IN (SELECT event_id FROM webhook_deliveries WHERE endpoint_id = $2 AND state = 'delivered' LIMIT 2)
		   OR id IN (SELECT event_id FROM webhook_deliveries WHERE endpoint_id = $2 AND state = 'pending')`, b.acct.ID, ep.ID); err != nil {
		t.Fatal(err)
	}
	n, err := b.deliverer.Prune(ctx)
	if err != nil || n != 2 {
		t.Fatalf("pruned %d (%v), want the 2 old delivered events", n, err)
	}
	var left int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1`, ep.ID).Scan(&left); err != nil || left != 2 {
		t.Fatalf("%d deliveries left (%v), want 2", left, err)
	}
}
