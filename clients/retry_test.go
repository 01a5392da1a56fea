package clients_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
	"broll/internal/money"
)

// retryScene is what one client (Go or TypeScript) is tested with: a key
// limited to one request a minute, a proxy that answers 503 to its first
// request, and a proxy that loses the answer of the first purchase after
// the node committed it; each with its own account, so that its balance and
// purchases are its own.
type retryScene struct {
	LimitedKey  string    `json:"limited_key"`
	FlakyURL    string    `json:"flaky_url"`
	FlakyKey    string    `json:"flaky_key"`
	FlakyVideo  uuid.UUID `json:"flaky_video"`
	DropURL     string    `json:"drop_url"`
	DropKey     string    `json:"drop_key"`
	DropVideo   uuid.UUID `json:"drop_video"`
	flaky, drop *proxy
	dropAccount billingtest.Account
}

const sceneCredits = money.Cents(100_00)

func newRetryScene(t *testing.T, n liveNode) *retryScene {
	t.Helper()
	ctx := context.Background()
	s := &retryScene{}
	// A customer key limited to one request a minute (PATCH /api/v1/keys).
	acct := billingtest.NewAccount(t, n.pool, billingtest.AccountOpts{Credits: sceneCredits})
	limited := acct.CustomerKey(t, n.pool, "limited")
	root, err := brollclient.New(brollclient.Options{APIKey: acct.RootKey.Secret, BaseURL: n.url})
	if err != nil {
		t.Fatal(err)
	}
	r, err := root.API.UpdateCustomerKeyWithResponse(ctx, &brollclient.UpdateCustomerKeyParams{Id: limited.ID},
		brollclient.KeyUpdate{RateLimitPerMinute: brollclient.Ptr(1)})
	if err != nil || r.JSON200 == nil {
		t.Fatalf("limit the key: %v %s", err, body(r))
	}
	s.LimitedKey = limited.Secret

	flakyAcct := billingtest.NewAccount(t, n.pool, billingtest.AccountOpts{Credits: sceneCredits})
	s.FlakyKey, s.FlakyVideo = flakyAcct.RootKey.Secret, n.videos(t, 1, "easy")[0]
	s.flaky = newProxy(t, n.url, func(n int, _ *http.Request) action {
		if n == 1 {
			return unavailable
		}
		return forward
	})
	s.FlakyURL = s.flaky.url

	s.dropAccount = billingtest.NewAccount(t, n.pool, billingtest.AccountOpts{Credits: sceneCredits})
	s.DropKey, s.DropVideo = s.dropAccount.RootKey.Secret, n.videos(t, 1, "easy")[0]
	var dropped atomic.Bool
	s.drop = newProxy(t, n.url, func(_ int, r *http.Request) action {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/purchase") && dropped.CompareAndSwap(false, true) {
			return dropAnswer
		}
		return forward
	})
	s.DropURL = s.drop.url
	return s
}

// check verifies what the node and the proxies saw once a client has gone
// through the scene: the 503 was retried after its Retry-After with the
// same Idempotency-Key, and the purchase whose answer was lost was sent
// again with the same Idempotency-Key, replayed, and charged once.
func (s *retryScene) check(t *testing.T, n liveNode) {
	t.Helper()
	flaky := s.flaky.requests("/purchase")
	if len(flaky) != 2 || flaky[0].idempotencyKey == "" || flaky[1].idempotencyKey != flaky[0].idempotencyKey {
		t.Fatalf("the purchase behind a 503: %+v, want two attempts with one Idempotency-Key", flaky)
	}
	if wait := flaky[1].at.Sub(flaky[0].at); wait < 900*time.Millisecond {
		t.Errorf("the retry after a 503 with Retry-After: 1 came %v later", wait)
	}
	drop := s.drop.requests("/purchase")
	if len(drop) != 2 || drop[0].idempotencyKey == "" || drop[1].idempotencyKey != drop[0].idempotencyKey ||
		drop[0].status != http.StatusOK || drop[1].replayed != "true" {
		t.Fatalf("the purchase whose answer was lost: %+v, want two attempts with one Idempotency-Key, the second replayed", drop)
	}
	var balance int64
	var purchases int
	err := n.pool.QueryRow(context.Background(), `
		SELECT a.balance_cents, (SELECT count(*) FROM purchases p JOIN api_keys k ON k.id = p.api_key_id WHERE k.account_id = a.id)
		FROM accounts a WHERE a.id = $1`, s.dropAccount.ID).Scan(&balance, &purchases)
	if err != nil {
		t.Fatal(err)
	}
	if balance != int64(sceneCredits)-500 || purchases != 1 {
		t.Fatalf("after a retried purchase: balance %s and %d purchases, want %s and 1",
			money.Cents(balance), purchases, sceneCredits-500)
	}
}

// The hand-written layer of the Go client against a live node: a 429 of a
// key limited to one request a minute is waited out (Retry-After) and
// answered; a 503 is retried after its Retry-After; a purchase whose answer
// was lost after the node committed it is retried with the same
// Idempotency-Key and charged once; errors are typed by code; iterators
// follow next_cursor.
func TestGoClientRetriesAndIdempotency(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	s := newRetryScene(t, n)
	ctx := context.Background()
	fast := func(key, url string) *brollclient.Broll {
		b, err := brollclient.New(brollclient.Options{APIKey: key, BaseURL: url, MaxRetries: 3,
			MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, UserAgent: "clients-test"})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	t.Run("429 waited out", func(t *testing.T) {
		t.Parallel()
		b := fast(s.LimitedKey, n.url)
		if _, err := b.Balance(ctx); err != nil {
			t.Fatal(err)
		}
		// Without retries the second request is refused, typed.
		noRetry, err := brollclient.New(brollclient.Options{APIKey: s.LimitedKey, BaseURL: n.url, MaxRetries: brollclient.NoRetries})
		if err != nil {
			t.Fatal(err)
		}
		_, err = noRetry.Balance(ctx)
		var apiErr *brollclient.Error
		if !errors.As(err, &apiErr) || apiErr.Status != http.StatusTooManyRequests || apiErr.Code != brollclient.CodeRateLimited ||
			!apiErr.Retryable || apiErr.RetryAfter <= 0 {
			t.Fatalf("a rate-limited request without retries: %v, want a retryable rate_limited *Error with RetryAfter", err)
		}
		// With them, it waits out Retry-After and is answered.
		if _, err := b.Balance(ctx); err != nil {
			t.Fatalf("a rate-limited request with retries: %v", err)
		}
	})

	t.Run("503 and a lost answer", func(t *testing.T) {
		t.Parallel()
		r, err := fast(s.FlakyKey, s.FlakyURL).Purchase(ctx, brollclient.PurchaseRequest{VideoIds: []uuid.UUID{s.FlakyVideo}})
		if err != nil || brollclient.Cents(r.TotalCharged) != 500 {
			t.Fatalf("a purchase behind a 503: %+v %v", r, err)
		}
		r, err = fast(s.DropKey, s.DropURL).Purchase(ctx, brollclient.PurchaseRequest{VideoIds: []uuid.UUID{s.DropVideo}})
		if err != nil {
			t.Fatalf("a purchase whose answer was lost: %v", err)
		}
		// The replayed answer is the first one: charged, not already owned.
		if brollclient.Cents(r.TotalCharged) != 500 || r.Purchases[0].AlreadyOwned {
			t.Fatalf("a purchase whose answer was lost answered %+v, want the first answer (charged 5.00)", r)
		}
		s.check(t, n)
	})

	t.Run("typed errors and iterators", func(t *testing.T) {
		t.Parallel()
		acct := billingtest.NewAccount(t, n.pool, billingtest.AccountOpts{Credits: 10_00})
		b := fast(acct.RootKey.Secret, n.url)
		_, err := b.Purchase(ctx, brollclient.PurchaseRequest{VideoIds: []uuid.UUID{uuid.New()}})
		var apiErr *brollclient.Error
		if !errors.As(err, &apiErr) || apiErr.Code != brollclient.CodeNotFound || apiErr.Retryable || apiErr.RequestID == "" {
			t.Fatalf("an unknown clip: %v, want a not_found *Error", err)
		}
		videos := n.videos(t, 3, "hard")
		_, err = b.Purchase(ctx, brollclient.PurchaseRequest{VideoIds: videos})
		if !errors.As(err, &apiErr) || apiErr.Code != brollclient.CodeInsufficientCredits || apiErr.Members["available"] != 10.0 {
			t.Fatalf("three hard clips on 10.00: %v, want insufficient_credits with available 10", err)
		}
		if _, err := b.Purchase(ctx, brollclient.PurchaseRequest{VideoIds: n.videos(t, 1, "easy")}); err != nil {
			t.Fatal(err)
		}
		seen := map[uuid.UUID]bool{}
		for v, err := range b.Videos(ctx, &brollclient.ListVideosParams{Limit: brollclient.Ptr(2)}) {
			if err != nil {
				t.Fatal(err)
			}
			if seen[v.Id] {
				t.Fatalf("clip %s listed twice", v.Id)
			}
			seen[v.Id] = true
		}
		// startNode's 3, the scene's 2, these 4: every clip, two a page.
		if len(seen) < 9 {
			t.Fatalf("Videos walked %d clips, want every one (at least 9)", len(seen))
		}
		count := 0
		for _, err := range b.Purchases(ctx, &brollclient.ListPurchasesParams{Limit: brollclient.Ptr(1)}) {
			if err != nil {
				t.Fatal(err)
			}
			count++
		}
		if count != 1 {
			t.Fatalf("Purchases walked %d purchases, want 1", count)
		}
		for i := range 3 {
			if _, err := b.CreateKey(ctx, brollclient.KeyCreate{CustomerLabel: "iter " + string(rune('a'+i))}); err != nil {
				t.Fatal(err)
			}
		}
		keys := 0
		for _, err := range b.Keys(ctx, &brollclient.ListCustomerKeysParams{Limit: brollclient.Ptr(1)}) {
			if err != nil {
				t.Fatal(err)
			}
			keys++
		}
		if keys != 3 {
			t.Fatalf("Keys walked %d keys, want 3", keys)
		}
	})
}

// The same scene through the TypeScript client (clients/ts/test/retries.mjs).
func TestTypeScriptClientRetriesAndIdempotency(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	s := newRetryScene(t, n)
	js, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	node(t, "retries.mjs", "BROLL_URL="+n.url, "BROLL_SCENE="+string(js))
	s.check(t, n)
}
