package api

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
)

// Test mode over HTTP: keys made with mode test, their purchases paid from
// the test balance and invisible to live lists and balances, links that
// serve the preview's bytes (never the full file's) on both media stores.
func TestTestModeOverHTTP(t *testing.T) {
	t.Parallel()
	for _, store := range []string{"local", "s3"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			e := setup(t, envOpts{s3: store == "s3"})
			acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10_000})
			root := acct.RootKey.Secret

			t.Run("mode is validated", func(t *testing.T) {
				for _, mode := range []any{"bogus", "", "TEST", 1, true} {
					r := e.do(t, 0, "POST", "/api/v1/keys", root, map[string]any{"customer_label": "x", "mode": mode})
					if p := problemOf(t, r); r.status != 400 || p.Code != "invalid_request" || deref(p.Field) != "mode" {
						t.Errorf("mode %v: %d %s", mode, r.status, r.raw)
					}
				}
				if r := e.do(t, 0, "GET", "/api/v1/keys?mode=sandbox", root, nil); r.status != 400 || deref(problemOf(t, r).Field) != "mode" {
					t.Errorf("list mode=sandbox: %d %s", r.status, r.raw)
				}
			})

			r := e.do(t, 0, "POST", "/api/v1/keys", root, map[string]any{"customer_label": "tester", "mode": "test"})
			testKey := expect[brollclient.KeyCreated](t, r, 201)
			if !strings.HasPrefix(testKey.ApiKey, "dsk_test_") || !strings.HasPrefix(testKey.Details.KeyPrefix, "dsk_test_") ||
				len(testKey.Details.KeyPrefix) <= len("dsk_test_") || testKey.Details.Mode != "test" || testKey.Details.Livemode {
				t.Fatalf("test key: %s", r.raw)
			}
			r = e.do(t, 0, "POST", "/api/v1/keys", root, map[string]any{"customer_label": "buyer"})
			liveKey := expect[brollclient.KeyCreated](t, r, 201)
			if strings.HasPrefix(liveKey.ApiKey, "dsk_test_") || liveKey.Details.Mode != "live" || !liveKey.Details.Livemode {
				t.Fatalf("live key: %s", r.raw)
			}

			t.Run("the key list shows both and filters by mode", func(t *testing.T) {
				for query, want := range map[string][]uuid.UUID{
					"":           {testKey.Details.Id, liveKey.Details.Id},
					"?mode=test": {testKey.Details.Id},
					"?mode=live": {liveKey.Details.Id},
				} {
					list := expect[brollclient.KeyList](t, e.do(t, 0, "GET", "/api/v1/keys"+query, root, nil), 200)
					if len(list.Keys) != len(want) {
						t.Fatalf("GET /api/v1/keys%s: %d keys, want %d", query, len(list.Keys), len(want))
					}
					for i, k := range list.Keys {
						if k.Id != want[i] || k.Livemode != (k.Mode == "live") {
							t.Errorf("GET /api/v1/keys%s: key %d is %+v", query, i, k)
						}
					}
				}
			})

			videos := billingtest.Videos(t, e.pool, 2, "easy")
			full, preview := bytes.Repeat([]byte("FULL"), 2500), bytes.Repeat([]byte("prev"), 700)
			ctx := context.Background()
			for _, v := range videos {
				e.putMedia(t, v, full)
			}

			bought := e.buy(t, 0, testKey.ApiKey, videos...)
			if bought.Livemode || bought.TotalCharged != 10 || bought.Balance != 990 {
				t.Fatalf("test purchase: %+v", bought)
			}
			liveBought := e.buy(t, 0, liveKey.ApiKey, videos[0])
			if !liveBought.Livemode || liveBought.Balance != 95 {
				t.Fatalf("live purchase: %+v", liveBought)
			}

			t.Run("balances", func(t *testing.T) {
				for key, want := range map[string]brollclient.Balance{
					testKey.ApiKey: {Balance: 990, Livemode: false},
					liveKey.ApiKey: {Balance: 95, Livemode: true},
					root:           {Balance: 95, Livemode: true},
				} {
					got := expect[brollclient.Balance](t, e.do(t, 0, "GET", "/api/v1/balance", key, nil), 200)
					if got.Balance != want.Balance || got.Livemode != want.Livemode {
						t.Errorf("balance of %.12s: %+v, want %+v", key, got, want)
					}
					if !want.Livemode && (got.MonthToDate.Purchases != 2 || got.MonthToDate.Amount != 10) {
						t.Errorf("test month to date %+v", got.MonthToDate)
					}
					if want.Livemode && (got.MonthToDate.Purchases != 1 || got.MonthToDate.Amount != 5) {
						t.Errorf("live month to date of %.12s: %+v", key, got.MonthToDate)
					}
				}
			})
			t.Run("lists", func(t *testing.T) {
				for key, want := range map[string]int{root: 1, liveKey.ApiKey: 1, testKey.ApiKey: 2} {
					got := expect[brollclient.PurchaseList](t, e.do(t, 0, "GET", "/api/v1/broll/purchases", key, nil), 200)
					if got.Summary.Count != want || len(got.Purchases) != want {
						t.Fatalf("list of %.12s: %d purchases, want %d", key, got.Summary.Count, want)
					}
					for _, p := range got.Purchases {
						if p.Livemode != (key != testKey.ApiKey) {
							t.Errorf("list of %.12s holds %+v", key, p)
						}
					}
				}
			})
			t.Run("a test link serves the preview, never the full file", func(t *testing.T) {
				link := downloadLink(bought.Purchases, 0)
				status, body, _ := e.fetchMedia(t, link)
				if status != 409 || !strings.Contains(string(body), "preview_not_ready") || bytes.Contains(body, full[:16]) {
					t.Fatalf("without a preview: %d %.200s", status, body)
				}
				key := "clips/" + videos[0].String() + "/preview.mp4"
				if _, err := e.media.Put(ctx, key, bytes.NewReader(preview)); err != nil {
					t.Fatal(err)
				}
				if _, err := e.pool.Exec(ctx, `UPDATE videos SET preview_key = $2 WHERE id = $1`, videos[0], key); err != nil {
					t.Fatal(err)
				}
				status, body, _ = e.fetchMedia(t, link)
				if status != 200 || !bytes.Equal(body, preview) {
					t.Fatalf("test link: %d, %d bytes (preview %d, full %d)", status, len(body), len(preview), len(full))
				}
				status, body, _ = e.fetchMedia(t, downloadLink(liveBought.Purchases, 0))
				if status != 200 || !bytes.Equal(body, full) {
					t.Fatalf("live link: %d, %d bytes", status, len(body))
				}
			})
		})
	}
}

// A test key is a customer key like any other: PATCH sets its spend limit,
// which refuses its test purchases as it would live ones; Idempotency-Key
// replays its answers; MCP get_balance and purchase_videos say livemode
// false and show the test balance.
func TestTestKeyLimitsIdempotencyAndMCP(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10_000})
	test := acct.TestKey(t, e.pool, "sandbox")
	videos := billingtest.Videos(t, e.pool, 3, "easy")

	r := e.do(t, 0, "PATCH", "/api/v1/keys?id="+test.ID.String(), acct.RootKey.Secret,
		map[string]any{"spend_limit": map[string]any{"amount": 7, "period": "month"}})
	if patched := expect[brollclient.KeyUpdated](t, r, 200); patched.Key.Mode != "test" || patched.Key.Livemode {
		t.Fatalf("PATCH of a test key: %s", r.raw)
	}

	buy := func(idem string, ids ...uuid.UUID) response {
		return e.send(t, 0, "POST", "/api/v1/broll/purchase",
			map[string]string{"Authorization": "Bearer " + test.Secret, "Idempotency-Key": idem},
			map[string]any{"video_ids": ids})
	}
	first := buy("once", videos[0])
	if res := expect[brollclient.PurchaseResult](t, first, 200); res.Livemode || res.Balance != 995 {
		t.Fatalf("test purchase: %s", first.raw)
	}
	again := buy("once", videos[0])
	if again.status != 200 || again.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.raw, first.raw) {
		t.Fatalf("replay: %d %q %s", again.status, again.header.Get("Idempotent-Replayed"), again.raw)
	}
	if r := buy("twice", videos[1]); r.status != 402 || problemOf(t, r).Code != "spend_limit_exceeded" {
		t.Fatalf("over the test key's limit: %d %s", r.status, r.raw)
	}
	var live, testBalance int64
	if err := e.pool.QueryRow(context.Background(), `SELECT a.balance_cents, t.balance_cents
		FROM accounts a JOIN test_balances t ON t.account_id = a.id WHERE a.id = $1`, acct.ID).Scan(&live, &testBalance); err != nil {
		t.Fatal(err)
	}
	if live != 10_000 || testBalance != 99_500 {
		t.Fatalf("live %d, test %d after the refusal", live, testBalance)
	}

	cs := mcpMustConnect(t, e.serveLoopback(t), test.Secret)
	if bal := decode[brollclient.Balance](t, callToolOK(t, cs, "get_balance", nil)); bal.Livemode || bal.Balance != 995 {
		t.Fatalf("get_balance of a test key: %+v", bal)
	}
	quote := decode[brollclient.PurchaseResult](t, callToolOK(t, cs, "purchase_videos", map[string]any{"video_ids": []string{videos[2].String()}, "dry_run": true}))
	if quote.Livemode || quote.Balance != 995 {
		t.Fatalf("purchase_videos quote of a test key: %+v", quote)
	}
}
