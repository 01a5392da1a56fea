package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
	"broll/internal/config"
	"broll/wiring"
)

// hookReceiver is a real HTTP receiver on loopback that accepts only
// deliveries signed with its endpoint's secret (the Standard Webhooks Go
// library checks them) and records each event's type and key.
type hookReceiver struct {
	*httptest.Server
	mu       sync.Mutex
	secret   string
	got      []hookEvent
	unsigned int
}

// hookEvent is what a receiver keeps of one delivery.
type hookEvent struct {
	Type string
	Key  string // data.key.id, "" for an event about no key
}

func newHookReceiver(t *testing.T) *hookReceiver {
	t.Helper()
	r := &hookReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		wh, err := standardwebhooks.NewWebhook(r.secret)
		if err == nil {
			err = wh.Verify(body, req.Header)
		}
		if err != nil {
			r.unsigned++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var evt struct {
			Type string `json:"type"`
			Data struct {
				Key *struct {
					ID string `json:"id"`
				} `json:"key"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &evt); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		e := hookEvent{Type: evt.Type}
		if evt.Data.Key != nil {
			e.Key = evt.Data.Key.ID
		}
		r.got = append(r.got, e)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *hookReceiver) setSecret(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secret = s
}

func (r *hookReceiver) events() ([]hookEvent, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got), r.unsigned
}

// loopbackHooks lets the test's receivers, on 127.0.0.1, through the
// address check, as BROLL_WEBHOOK_ALLOW_HOSTS would.
func loopbackHooks(c *config.Config) { c.WebhookAllowHosts = []string{"127.0.0.1"} }

// runDeliverer runs the worker's delivery loop over the env's database
// until the test ends.
func runDeliverer(t *testing.T, e *testEnv) {
	t.Helper()
	cfg := e.cfg
	cfg.WebhookPollInterval, cfg.WebhookRetryBase, cfg.WebhookRetryMax = 20*time.Millisecond, 10*time.Millisecond, 50*time.Millisecond
	d := e.graph(t, cfg, wiring.Options{Parts: wiring.Delivery}).Deliverer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// Two root keys of one account (two integrations) each manage only their
// own endpoints, and each endpoint receives, through the worker, only the
// events of its own root's keys; balance.low, about the shared pool,
// reaches both.
func TestWebhookEndpointsBelongToTheirRootKey(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{configure: loopbackHooks})
	a := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 100_000})
	b := a.AnotherRoot(t, e.pool, "second integration")
	rootA, rootB := a.RootKey.Secret, b.RootKey.Secret
	rcvA, rcvB := newHookReceiver(t), newHookReceiver(t)

	create := func(key string, rcv *hookReceiver) brollclient.WebhookCreated {
		t.Helper()
		w := decode[brollclient.WebhookCreated](t, e.do(t, 0, "POST", "/api/v1/webhooks", key, map[string]any{
			"url": rcv.URL, "events": []string{"purchase.completed", "balance.low", "key.created", "key.revoked", "spend_limit.reached"}}))
		rcv.setSecret(w.Secret)
		return w
	}
	epA, epB := create(rootA, rcvA), create(rootB, rcvB)

	t.Run("each root lists only its own endpoints", func(t *testing.T) {
		for _, c := range []struct {
			key, want string
		}{{rootA, epA.Id.String()}, {rootB, epB.Id.String()}} {
			l := decode[brollclient.WebhookList](t, e.do(t, 0, "GET", "/api/v1/webhooks", c.key, nil))
			if len(l.Webhooks) != 1 || l.Webhooks[0].Id.String() != c.want {
				t.Errorf("list: %+v, want only %s", l.Webhooks, c.want)
			}
		}
	})
	t.Run("another root's endpoint is 404", func(t *testing.T) {
		for _, c := range []struct {
			key string
			ep  brollclient.WebhookCreated
		}{{rootB, epA}, {rootA, epB}} {
			base := "/api/v1/webhooks/" + c.ep.Id.String()
			for _, r := range []struct{ method, path string }{
				{"GET", base + "/deliveries"}, {"POST", base + "/test"}, {"POST", base + "/rotate"},
				{"POST", base + "/enable"}, {"DELETE", "/api/v1/webhooks?id=" + c.ep.Id.String()},
			} {
				if got := e.do(t, 0, r.method, r.path, c.key, nil); got.status != http.StatusNotFound {
					t.Errorf("%s %s with the other root: %d %s", r.method, r.path, got.status, got.raw)
				}
			}
		}
	})

	// Each root makes a customer key (key.created) that buys a clip
	// (purchase.completed); the first purchase takes the shared pool below
	// its threshold (balance.low).
	if _, err := e.pool.Exec(t.Context(), `UPDATE accounts SET low_balance_cents = 99800 WHERE id = $1`, a.ID); err != nil {
		t.Fatal(err)
	}
	runDeliverer(t, e)
	custA := decode[brollclient.KeyCreated](t, e.do(t, 0, "POST", "/api/v1/keys", rootA, map[string]any{"customer_label": "a-customer"}))
	custB := decode[brollclient.KeyCreated](t, e.do(t, 0, "POST", "/api/v1/keys", rootB, map[string]any{"customer_label": "b-customer"}))
	vids := billingtest.Videos(t, e.pool, 2, "easy")
	e.buy(t, 0, custA.ApiKey, vids[0])
	e.buy(t, 0, custB.ApiKey, vids[1])

	want := map[*hookReceiver][]hookEvent{
		rcvA: {{"key.created", custA.Details.Id.String()}, {"purchase.completed", custA.Details.Id.String()}, {"balance.low", ""}},
		rcvB: {{"key.created", custB.Details.Id.String()}, {"purchase.completed", custB.Details.Id.String()}, {"balance.low", ""}},
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var pending int
		if err := e.pool.QueryRow(t.Context(), `SELECT count(*) FROM webhook_deliveries WHERE state = 'pending'`).Scan(&pending); err != nil {
			t.Fatal(err)
		}
		gotA, _ := rcvA.events()
		gotB, _ := rcvB.events()
		if pending == 0 && len(gotA) >= len(want[rcvA]) && len(gotB) >= len(want[rcvB]) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30s: %d deliveries pending; A got %v, B got %v", pending, gotA, gotB)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for rcv, name := range map[*hookReceiver]string{rcvA: "root A's receiver", rcvB: "root B's receiver"} {
		got, unsigned := rcv.events()
		if unsigned != 0 {
			t.Errorf("%s refused %d deliveries with a bad signature", name, unsigned)
		}
		sortEvents := func(l []hookEvent) {
			slices.SortFunc(l, func(x, y hookEvent) int {
				if x.Type != y.Type {
					if x.Type < y.Type {
						return -1
					}
					return 1
				}
				if x.Key < y.Key {
					return -1
				}
				if x.Key > y.Key {
					return 1
				}
				return 0
			})
		}
		w := slices.Clone(want[rcv])
		sortEvents(got)
		sortEvents(w)
		if !slices.Equal(got, w) {
			t.Errorf("%s got %v, want %v", name, got, w)
		}
	}
}
