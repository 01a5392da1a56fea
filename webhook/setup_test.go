package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"broll/billing/billingtest"
	"broll/internal/config"
	"broll/internal/seal"
	"broll/internal/testkit"
	"broll/webhook"
	"broll/wiring"
	"broll/wiring/wiringtest"
)

// loopback lets the tests' receivers, which listen on 127.0.0.1, through
// the guard as BROLL_WEBHOOK_ALLOW_HOSTS would.
func loopback(t testing.TB) webhook.Allow {
	t.Helper()
	a, err := webhook.ParseAllow([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// message is one request a receiver got.
type message struct {
	Header http.Header
	Body   []byte
	At     time.Time
}

func (m message) event(t *testing.T) event {
	t.Helper()
	var e event
	if err := json.Unmarshal(m.Body, &e); err != nil {
		t.Fatalf("body %s: %v", m.Body, err)
	}
	return e
}

type event struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt time.Time       `json:"created_at"`
	Livemode  bool            `json:"livemode"`
	Data      json.RawMessage `json:"data"`
}

// receiver is a real HTTP server on loopback that records every request
// and answers what status says for the n-th request (200 by default).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []message
	status func(n int) int
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{status: func(int) int { return http.StatusOK }}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, message{Header: req.Header.Clone(), Body: body, At: time.Now()})
		n := len(r.got)
		status := r.status
		r.mu.Unlock()
		w.WriteHeader(status(n))
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) messages() []message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]message(nil), r.got...)
}

// bundle is what a test needs: a database, an account, the services.
type bundle struct {
	pool      *pgxpool.Pool
	url       string // the test database, for processes the test starts
	acct      billingtest.Account
	sealer    *seal.Sealer
	hooks     *webhook.Service
	deliverer *webhook.Deliverer
}

// testSealerKey is the tests' BROLL_SIGNING_KEY: every process of a test
// (the helper a kill test starts too) opens the secrets the others sealed.
const testSealerKey = "webhook-tests-signing-key-0123456789abcdef"

func testSealer(t testing.TB) *seal.Sealer {
	t.Helper()
	s, err := wiring.NewSealer(config.Config{SigningKey: testSealerKey})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// services is the graph a node would build over the test's database,
// with the tests' signing key and public URL changed by configure (nil:
// none) and, when rdb is not nil, the Redis part over it: the billing,
// keys and catalog whose changes write the events.
func (b bundle) services(t testing.TB, rdb *redis.Client, configure func(*config.Config)) *wiring.Services {
	t.Helper()
	cfg := config.Defaults()
	cfg.SigningKey, cfg.PublicURL = testSealerKey, "http://api.test"
	if configure != nil {
		configure(&cfg)
	}
	o := wiring.Options{Parts: wiring.Secrets, Pool: b.pool}
	if rdb != nil {
		o.Parts, o.Redis = o.Parts|wiring.Redis, rdb
	}
	return wiringtest.Open(t, cfg, o)
}

// owner is the account's root key, which the tests' endpoints belong to.
func (b bundle) owner() webhook.Owner { return webhook.RootKey(b.acct.ID, b.acct.RootKey.ID) }

func setup(t testing.TB) bundle {
	t.Helper()
	pool, url := testkit.NewPool(t)
	allow := loopback(t)
	sealer := testSealer(t)
	return bundle{
		pool:   pool,
		url:    url,
		acct:   billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100_000}),
		sealer: sealer,
		hooks:  webhook.New(pool, sealer, webhook.ServiceOptions{Allow: allow}),
		deliverer: webhook.NewDeliverer(pool, sealer, webhook.DelivererOptions{
			Allow: allow, RetryBase: time.Millisecond, RetryMax: 5 * time.Millisecond,
		}),
	}
}

// drain delivers until nothing is due and nothing pending remains (or the
// deadline passes): retries are due within milliseconds in tests.
func (b bundle) drain(t *testing.T, d *webhook.Deliverer) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := d.DeliverDue(ctx); err != nil {
			t.Fatal(err)
		}
		var pending int
		if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries d
			JOIN webhook_endpoints e ON e.id = d.endpoint_id
			WHERE d.state = 'pending' AND e.enabled`).Scan(&pending); err != nil {
			t.Fatal(err)
		}
		if pending == 0 {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatal("deliveries still pending after 30s")
}
